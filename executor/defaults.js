// The one place for defaults and allowed values of a run's configuration.

export const STRATEGIES = Object.freeze(['up', 'cm', 'pm2', 'hs'])
export const BACKENDS = Object.freeze(['auto', 'local', 'swarm'])
export const LOAD_BALANCERS = Object.freeze(['auto', 'haproxy', 'ingress'])
export const DRIVER_NAMES = Object.freeze(['autocannon', 'jmeter'])
/** How replicas go over the chosen Swarm nodes: Swarm's spread, or as few nodes as their CPU quota allows. */
export const PLACEMENTS = Object.freeze(['spread', 'pack'])

export const DEFAULTS = Object.freeze({
  benchmark: 'page',
  concurrency: 10,
  duration: 10,
  warmup: 2,
  driver: 'autocannon',
  backend: 'auto',
  lb: 'auto',
  placement: 'spread',
  out: 'results',
  port: 0,
  readyTimeout: 30
})

/** Upper bounds that keep a typo from starting something absurd. */
export const LIMITS = Object.freeze({
  instances: 64,
  nodes: 64,
  concurrency: 10000,
  rate: 1000000,
  duration: 86400,
  warmup: 3600
})

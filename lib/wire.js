// What nodescale's parts agree on over the wire: the ports they listen on and the headers they send.

/** The server under test listens here inside its container (the stack publishes it on a port of the host). */
export const APP_PORT = 8080
/** Each node's RC (resource collector) listens here, published in host mode. */
export const RC_PORT = 9100
/** The control plane's image registry listens here on the manager. */
export const REGISTRY_PORT = 5000

/** Every answer of the server under test names the instance (process) that gave it: readiness counts distinct ones. */
export const INSTANCE_HEADER = 'X-Nodescale-Instance'
/** A load generator agent (executor/load-agent/) listens here on its node's own network (host mode, --load-nodes). */
export const LOAD_AGENT_PORT = 7393
/** Where a load agent reads its token: the file its Swarm secret is mounted at (NODESCALE_AGENT_TOKEN_FILE). */
export const AGENT_TOKEN_FILE = '/run/secrets/nodescale_agent_token'

/** The HTTP methods a load driver sends (`--method`; a benchmark app's request says GET or POST). */
export const LOAD_METHODS = Object.freeze(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])

// Finds out whether Swarm's ingress routing mesh answers on this swarm (it needs IPVS in the kernel), by publishing a
// probe service in ingress mode and calling it.
import { setTimeout as sleep } from 'node:timers/promises'
import { fail } from '../../lib/messages.js'
import { dockerError } from './engine.js'
import { probe } from '../../lib/net.js'
import { removeStack } from './stack-remove.js'
import { NAMESPACE_LABEL, RUN_LABEL, OWNER_LABEL, ownerId } from './stack-render.js'
import { APP_PORT } from '../../lib/wire.js'
import { createServiceWithAuth } from './registry-auth.js'

const cache = new WeakMap()

async function registerImage (docker) {
  const images = await docker.listImages({ filters: { label: ['io.nodescale.kind=register'] } })
  images.sort((a, b) => b.Created - a.Created)
  const tag = images.flatMap(i => i.RepoTags ?? []).find(t => t.startsWith('nodescale/register:'))
  if (!tag) throw fail('INGRESS_PROBE_WITHOUT_IMAGE')
  return tag
}

/**
 * True when a port published in ingress mode answers (the routing mesh works); false when it refuses while the task
 * runs (no IPVS). The answer is remembered per client.
 * @param {import('dockerode')} docker
 * @param {{ image?: string, log?: (line: string) => void, timeoutMs?: number, answerMs?: number }} [opts]
 * @returns {Promise<boolean>}
 */
export async function ingressWorks (docker, { image, log = () => {}, timeoutMs = 30_000, answerMs = 4000 } = {}) {
  if (cache.has(docker)) return cache.get(docker)
  let info
  let networks
  try {
    info = await docker.info()
    networks = await docker.listNetworks({ filters: { name: ['ingress'] } })
  } catch (err) {
    throw dockerError(err, 'probing the ingress mesh')
  }
  if (info.Swarm?.LocalNodeState !== 'active' || !networks.some(n => n.Ingress || n.Name === 'ingress')) {
    cache.set(docker, false)
    return false
  }
  const stack = `ns-ingress-probe-${process.pid}`
  const labels = { [NAMESPACE_LABEL]: stack, [RUN_LABEL]: 'ingress-probe', [OWNER_LABEL]: ownerId() }
  const tag = image ?? await registerImage(docker)
  let works = false
  try {
    const svc = await createServiceWithAuth(docker, {
      Name: `${stack}_app`,
      Labels: labels,
      TaskTemplate: {
        ContainerSpec: {
          Image: tag,
          Command: ['node'],
          Args: ['register/serve.js'],
          Env: [`PORT=${APP_PORT}`, 'NODESCALE_BENCHMARK=baseline', 'NODESCALE_INSTANCE=ingress-probe'],
          Labels: labels
        },
        RestartPolicy: { Condition: 'none' }
      },
      Mode: { Replicated: { Replicas: 1 } },
      EndpointSpec: { Mode: 'vip', Ports: [{ Protocol: 'tcp', TargetPort: APP_PORT, PublishMode: 'ingress' }] }
    }).catch(err => { throw dockerError(err, 'creating the ingress probe service') })
    const deadline = Date.now() + timeoutMs
    let runningSince = null
    let port
    while (Date.now() < deadline) {
      const tasks = await docker.listTasks({ filters: { service: [`${stack}_app`] } })
      const state = tasks[0]?.Status?.State
      if (['failed', 'rejected'].includes(state)) throw fail('INGRESS_PROBE_FAILED', { why: tasks[0].Status.Err })
      if (state === 'running') {
        runningSince ??= Date.now()
        port ??= (await docker.getService(svc.id).inspect()).Endpoint?.Ports?.[0]?.PublishedPort
        const host = /** @type {any} */ (docker).modem?.socketPath ? '127.0.0.1' : /** @type {any} */ (docker).modem?.host
        const res = port ? await probe(`http://${host}:${port}/healthz`, { timeoutMs: 1000 }).catch(() => null) : null
        if (res?.status === 200) { works = true; break }
        // The mesh may take a moment after the task starts; a port that keeps refusing has no mesh behind it.
        if (Date.now() - runningSince > answerMs) break
      }
      await sleep(200)
    }
    log(`swarm: the ingress routing mesh ${works ? 'answers' : `does not answer (a port published in ingress mode refused for ${answerMs} ms; no IPVS?)`}`)
  } finally {
    await removeStack(docker, stack).catch(err => log(`swarm: removing the ingress probe: ${err.message}`))
  }
  cache.set(docker, works)
  return works
}

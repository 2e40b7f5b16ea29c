// CPU quotas for local runs (--cpus-per-instance): a cgroup with a CFS quota, joined before exec, like a container's
// limit.
import { existsSync, mkdirSync, writeFileSync, readFileSync, rmdirSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { badFlag } from '../lib/errors.js'

const PERIOD_US = 100000

/** Where a quota group can be made, or null: cgroup v1's cpu controller or a v2 hierarchy with cpu.max. */
function quotaRoot (cgroupRoot) {
  const v1 = join(cgroupRoot, 'cpu')
  if (existsSync(join(v1, 'cpu.cfs_quota_us'))) return { kind: 'v1', dir: join(v1, 'nodescale') }
  if (existsSync(join(cgroupRoot, 'cgroup.controllers'))) return { kind: 'v2', dir: join(cgroupRoot, 'nodescale-quota') }
  return null
}

/**
 * A cgroup limited to `cpus` CPUs (e.g. 0.25). Processes started through wrap() are inside before they exec.
 * @param {{ name: string, cpus: number, cgroupRoot?: string }} opts
 */
export function createQuotaGroup ({ name, cpus, cgroupRoot = '/sys/fs/cgroup' }) {
  const root = quotaRoot(cgroupRoot)
  const quota = Math.max(1000, Math.round(cpus * PERIOD_US))
  const fail = why => badFlag('--cpus-per-instance',
    `needs CPU quotas from cgroups on the local backend, and ${why}; run as root on a cgroup v1/v2 host, or use --backend swarm`)
  if (!root) throw fail('no cgroup cpu controller is mounted here')
  const dir = join(root.dir, name)
  try {
    mkdirSync(dir, { recursive: true })
    if (root.kind === 'v1') {
      writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US))
      writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota))
    } else {
      writeFileSync(join(root.dir, 'cgroup.subtree_control'), '+cpu')
      writeFileSync(join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`)
    }
  } catch (err) {
    throw fail(`${dir} cannot be written (${err.code ?? err.message})`)
  }
  const procs = join(dir, 'cgroup.procs')
  return {
    path: dir,
    cpus,
    /** @param {string} cmd @param {string[]} args */
    wrap (cmd, args) {
      return { cmd: 'sh', args: ['-c', `echo $$ > '${procs}' && exec "$@"`, 'sh', cmd, ...args] }
    },
    async remove () {
      for (let i = 0; i < 50; i++) {
        try { rmdirSync(dir); return } catch (err) {
          if (err.code === 'ENOENT') return
          // still has processes that are exiting: move them out, then retry
          const parentProcs = join(root.kind === 'v1' ? join(cgroupRoot, 'cpu') : cgroupRoot, 'cgroup.procs')
          for (const pid of readFileSync(procs, 'utf8').split('\n').filter(Boolean)) {
            try { writeFileSync(parentProcs, pid) } catch {}
          }
          await sleep(100)
        }
      }
    }
  }
}

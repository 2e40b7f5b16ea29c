// Images onto the nodes that run a stack: without a registry, saved from the manager's engine and loaded into each
// node's engine through the API (one save stream fanned out); with one, tagged and pushed so every node pulls the same
// reference.
import { PassThrough } from 'node:stream'
import { fail } from '../../lib/messages.js'
import { dockerError, dockerMessage } from './engine.js'

/** Reads a JSON-lines progress stream (load, push) to its end; rejects on an `error` line. */
function drain (stream) {
  return new Promise((resolve, reject) => {
    let text = ''
    stream.on('data', (c) => { text += c.toString() })
    stream.on('error', reject)
    stream.on('end', () => {
      for (const line of text.split('\n')) {
        if (!line.trim()) continue
        let msg
        try { msg = JSON.parse(line) } catch { continue }
        if (msg.error || msg.errorDetail) return reject(new Error(msg.error ?? msg.errorDetail?.message))
      }
      resolve(text)
    })
  })
}

async function hasImage (docker, tag) {
  try {
    await docker.getImage(tag).inspect()
    return true
  } catch (err) {
    if (err.statusCode === 404) return false
    throw err
  }
}

/**
 * Makes sure every target engine has the images: the ones that lack some get them by `docker save | docker load`
 * through the API, all they lack in one archive (images that share layers, such as the register and the RC on one node
 * base, send those layers once). A node that cannot get them fails here, named, before anything is deployed.
 * @param {import('dockerode')} source the engine that has the images (the manager, where they were built)
 * @param {{ name: string, docker: import('dockerode'), tags?: string[] }[]} targets tags: the images this one needs
 *   (default all of `tags`)
 * @param {string[]} tags
 * @param {{ log?: (line: string) => void }} [opts]
 * @returns {Promise<{ tag: string, nodes: string[], ms: number }[]>} what was copied where
 */
export async function copyImages (source, targets, tags, { log = () => {} } = {}) {
  // targets grouped by the tags they lack: one save stream per group, fanned out to its targets
  const groups = new Map()
  for (const t of targets) {
    const lack = []
    for (const tag of t.tags ?? tags) {
      try {
        if (!await hasImage(t.docker, tag)) lack.push(tag)
      } catch (err) {
        throw fail('IMAGE_NOT_CHECKED', { node: t.name, tag, said: dockerMessage(err) }, { cause: err })
      }
    }
    if (!lack.length) continue
    const key = lack.join(' ')
    if (!groups.has(key)) groups.set(key, { lack, targets: [] })
    groups.get(key).targets.push(t)
  }
  const copied = []
  for (const { lack, targets: group } of groups.values()) {
    const started = Date.now()
    let saved
    try {
      saved = await /** @type {any} */ (source).getImages({ names: lack })
    } catch (err) {
      throw dockerError(err, `saving ${lack.join(', ')} from the manager`)
    }
    const copies = group.map(() => new PassThrough())
    for (const c of copies) saved.pipe(c)
    saved.on('error', (err) => { for (const c of copies) c.destroy(err) })
    await Promise.all(group.map(async (t, k) => {
      try {
        await drain(await t.docker.loadImage(copies[k]))
        for (const tag of lack) if (!await hasImage(t.docker, tag)) throw new Error(`the engine took the archive but does not list ${tag}`)
      } catch (err) {
        copies[k].resume()
        throw fail('IMAGES_NOT_LOADED', { node: t.name, images: lack, said: dockerMessage(err) }, { cause: err })
      }
    }))
    const ms = Date.now() - started
    log(`swarm: ${lack.join(', ')} loaded into ${group.map(t => t.name).join(', ')} in ${ms} ms (no registry: save and load through the API)`)
    for (const tag of lack) copied.push({ tag, nodes: group.map(t => t.name), ms })
  }
  return copied
}

/**
 * A local tag's repository and version (`nodescale/register:abc` -> nodescale/register, abc; no version: latest).
 * @param {string} tag
 */
export function splitTag (tag) {
  const [repo, version] = tag.split(/:(?=[^:/]+$)/)
  return { repo, version: version ?? 'latest' }
}

/** The manifest digest a push stream reports for what it pushed (its `aux.Digest`), or null. */
export function pushedDigest (text) {
  for (const line of text.split('\n')) {
    try {
      const digest = JSON.parse(line)?.aux?.Digest
      if (/^sha256:[0-9a-f]{64}$/.test(digest ?? '')) return digest
    } catch {}
  }
  return null
}

/**
 * Tags each image for a registry and pushes it there; returns the references to deploy by: by the digest the registry
 * computed (`HOST:PORT/repo@sha256:…`), so a tag pushed over later is never what a node pulls.
 * @param {import('dockerode')} docker
 * @param {string} registry HOST:PORT
 * @param {string[]} tags local tags (repo:tag)
 * @param {{ log?: (line: string) => void, auth?: { username: string, password: string },
 *   failed?: 'IMAGE_NOT_PUSHED' | 'IMAGE_NOT_PUSHED_TO_BUILTIN' }} [opts]
 *   auth: the registry's credentials (never logged); failed: the message of a failed push (its hint: what to check)
 * @returns {Promise<Record<string, string>>} local tag → registry reference by digest
 */
export async function pushImages (docker, registry, tags, { log = () => {}, auth, failed = 'IMAGE_NOT_PUSHED' } = {}) {
  /** @type {Record<string, string>} */
  const refs = {}
  for (const tag of tags) {
    const { repo, version } = splitTag(tag)
    const ref = `${registry}/${repo}:${version}`
    const started = Date.now()
    let digest
    try {
      await docker.getImage(tag).tag({ repo: `${registry}/${repo}`, tag: version })
      // the API wants an X-Registry-Auth header even for a registry without auth
      digest = pushedDigest(await drain(await docker.getImage(ref).push({ authconfig: { ...auth, serveraddress: registry } })))
    } catch (err) {
      throw fail(failed, { registry, ref, said: dockerMessage(err) }, { cause: err })
    }
    if (!digest) throw fail('PUSH_WITHOUT_DIGEST', { registry, ref })
    log(`swarm: pushed ${ref} in ${Date.now() - started} ms (${digest.slice(0, 19)}…)`)
    refs[tag] = `${registry}/${repo}@${digest}`
  }
  return refs
}

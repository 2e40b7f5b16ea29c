// The console-program wrapper (--app "cmd:<command line>"): each request runs the program, body -> stdin, stdout ->
// response.
import { spawn } from 'node:child_process'
import express from 'express'
import { badApp } from '../lib/errors.js'
import { splitCommandLine, findProgram } from './command-line.js'
import { optionsParser, int, bool } from './params.js'

const DEFAULTS = Object.freeze({ timeoutMs: '10000', maxOutputKb: '1024', bodyBytes: '0', queryArgs: 'false' })
const STDERR_TAIL = 2048

/** Ends a request with a plain-text status. */
function reply (res, status, text) {
  if (res.headersSent) return
  res.statusCode = status
  res.setHeader('Content-Type', 'text/plain')
  res.end(text)
}

/**
 * Runs the program once for one request and answers with its output.
 * @param {string} program absolute path
 * @param {string[]} args
 * @param {any} opts normalized options
 */
function runOnce (program, args, opts, req, res) {
  const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  const out = []
  let outBytes = 0
  let err = Buffer.alloc(0)
  let verdict = null // why the program was stopped early, if it was
  const stop = (why) => {
    if (verdict) return
    verdict = why
    child.kill('SIGKILL')
    child.stdout.destroy()
    child.stderr.destroy()
  }
  const timer = setTimeout(() => stop('timeout'), opts.timeoutMs)
  child.stdin.on('error', () => {}) // a program that does not read stdin closes it early: not an error
  req.pipe(child.stdin)
  child.stdout.on('data', chunk => {
    outBytes += chunk.length
    if (outBytes > opts.maxOutputKb * 1024) return stop('output')
    out.push(chunk)
  })
  child.stderr.on('data', chunk => { err = Buffer.concat([err, chunk]).subarray(-STDERR_TAIL) })
  res.on('close', () => { if (!res.writableFinished) stop('client') })
  child.on('error', e => {
    clearTimeout(timer)
    verdict = verdict ?? 'spawn'
    reply(res, 500, `cannot run ${program}: ${e.message}\n`)
  })
  child.on('close', (code, signal) => {
    clearTimeout(timer)
    const tail = err.toString('utf8').trim()
    if (verdict === 'timeout') return reply(res, 504, `${program} timed out after ${opts.timeoutMs} ms and was killed\n${tail}\n`)
    if (verdict === 'output') return reply(res, 500, `${program} wrote more than ${opts.maxOutputKb} KiB and was killed\n`)
    if (verdict) return
    if (code !== 0) return reply(res, 500, `${program} exited with ${signal ? `signal ${signal}` : `code ${code}`}\n${tail}\n`)
    res.statusCode = 200
    res.setHeader('Content-Type', 'text/plain')
    res.end(Buffer.concat(out))
  })
}

/**
 * A Benchmark that wraps a console program as an HTTP endpoint (the benchmark-suite thesis's web wrapper).
 * @param {{ commandLine: string, name?: string, cwd?: string }} spec commandLine without the "cmd:" prefix
 * @returns {any} a Benchmark object
 */
export function createConsoleBenchmark ({ commandLine, name, cwd = process.cwd() }) {
  const where = `"cmd:${commandLine}"`
  let words
  try {
    words = splitCommandLine(commandLine)
  } catch (e) {
    throw badApp(where, `cannot split the command line: ${e.message}`)
  }
  if (!words.length) throw badApp(where, 'no program after "cmd:" (e.g. --app "cmd:sha256sum")')
  const [programWord, ...baseArgs] = words
  const program = findProgram(programWord, { cwd })
  if (!program) {
    throw badApp(where, `program "${programWord}" is not ${programWord.includes('/') ? `an executable file (relative to ${cwd})` : 'an executable on PATH'}`)
  }
  const benchName = name ?? (programWord.split('/').pop().replace(/[^a-z0-9_-]+/gi, '-').replace(/^[^a-z0-9]+/i, '').slice(0, 64) || 'cmd')
  return {
    name: benchName,
    description: `runs ${commandLine} per request (body -> stdin, stdout -> response)`,
    defaults: { ...DEFAULTS },
    options: optionsParser(benchName, DEFAULTS, {
      timeoutMs: int({ min: 1, max: 3_600_000 }),
      maxOutputKb: int({ min: 1, max: 1024 * 1024 }),
      bodyBytes: int({ min: 0, max: 1024 * 1024 * 1024 }),
      queryArgs: bool()
    }),
    request: (opts) => opts.bodyBytes > 0
      ? { method: 'POST', path: '/', bodyBytes: opts.bodyBytes, headers: { 'content-type': 'application/octet-stream' } }
      : { method: 'GET', path: '/' },
    create: (opts) => {
      const router = express.Router()
      router.all('/', (req, res) => {
        let args = baseArgs
        // Opt-in, as in the thesis's wrapper: ?args=... appends arguments (split like the command line, never a shell).
        if (opts.queryArgs && typeof req.query.args === 'string') {
          try {
            args = [...baseArgs, ...splitCommandLine(req.query.args)]
          } catch (e) {
            return reply(res, 400, `args: ${e.message}\n`)
          }
        }
        runOnce(program, args, opts, req, res)
      })
      return router
    },
    commandLine,
    program
  }
}

#!/usr/bin/env node
// Installs JMeter 5.6.3 from Maven Central into the nodescale cache on first use (no download site needed).
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync, copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { cacheDir } from '../lib/paths.js'
import { formatError, exitCodeOf } from '../lib/errors.js'
import { fail } from '../lib/messages.js'

export const JMETER_VERSION = '5.6.3'
const MODULES = ['ApacheJMeter', 'ApacheJMeter_core', 'ApacheJMeter_http', 'ApacheJMeter_components', 'ApacheJMeter_config', 'ApacheJMeter_functions']

/** The folder JMeter lives in once installed. */
export function jmeterHome () {
  return process.env.NODESCALE_JMETER_HOME || join(cacheDir(), `jmeter-${JMETER_VERSION}`)
}

function has (cmd, args = ['-version']) {
  const r = spawnSync(cmd, args, { stdio: 'ignore' })
  return !r.error
}

function pom () {
  const deps = MODULES.map(a => '    <dependency><groupId>org.apache.jmeter</groupId>' +
    `<artifactId>${a}</artifactId><version>${JMETER_VERSION}</version></dependency>`).join('\n')
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>nodescale</groupId><artifactId>jmeter-fetch</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
${deps}
  </dependencies>
</project>
`
}

/**
 * Makes sure JMeter is installed and returns where. Installs it with Maven when it is not.
 * @param {{ log?: (line: string) => void }} [opts]
 * @returns {Promise<{ home: string, jar: string }>}
 */
export async function ensureJmeter ({ log = () => {} } = {}) {
  if (!has('java')) {
    throw fail('JAVA_NOT_ON_PATH')
  }
  const home = jmeterHome()
  const jar = join(home, 'bin', 'ApacheJMeter.jar')
  if (existsSync(join(home, '.complete'))) return { home, jar }
  if (process.env.NODESCALE_JMETER_HOME) {
    throw fail('JMETER_HOME_EMPTY', { home, version: JMETER_VERSION })
  }
  if (!has('mvn', ['-v'])) {
    throw fail('JMETER_WITHOUT_MAVEN', { version: JMETER_VERSION })
  }
  log(`installing JMeter ${JMETER_VERSION} from Maven Central into ${home} (once; about a minute)`)
  const work = `${home}.partial-${process.pid}`
  rmSync(work, { recursive: true, force: true })
  mkdirSync(join(work, 'deps'), { recursive: true })
  writeFileSync(join(work, 'pom.xml'), pom())
  const mvn = spawnSync('mvn', ['-q', '-B', '-f', join(work, 'pom.xml'), 'dependency:copy-dependencies', `-DoutputDirectory=${join(work, 'deps')}`],
    { encoding: 'utf8' })
  if (mvn.status !== 0) {
    rmSync(work, { recursive: true, force: true })
    throw fail('JMETER_NOT_FETCHED', { version: JMETER_VERSION, said: (mvn.stdout + mvn.stderr).trim().split('\n').slice(-5).join(' | ') })
  }
  const layout = join(work, 'home')
  // lib/junit: JMeter's launcher prints a stack trace on every start when it is missing
  for (const d of ['bin', 'lib/ext', 'lib/junit']) mkdirSync(join(layout, d), { recursive: true })
  for (const f of readdirSync(join(work, 'deps'))) {
    const src = join(work, 'deps', f)
    if (f === `ApacheJMeter-${JMETER_VERSION}.jar`) copyFileSync(src, join(layout, 'bin', 'ApacheJMeter.jar'))
    else if (f.startsWith('ApacheJMeter_')) copyFileSync(src, join(layout, 'lib', 'ext', f))
    else copyFileSync(src, join(layout, 'lib', f))
  }
  // jmeter.properties, saveservice.properties, the report templates: all under bin/ in the config jar.
  const unzip = spawnSync('unzip', ['-q', '-o', join(work, 'deps', `ApacheJMeter_config-${JMETER_VERSION}.jar`), 'bin/*', '-d', layout], { encoding: 'utf8' })
  if (unzip.status !== 0) {
    const jarX = spawnSync('sh', ['-c', `cd "${layout}" && jar xf "${join(work, 'deps', `ApacheJMeter_config-${JMETER_VERSION}.jar`)}" bin`],
      { encoding: 'utf8' })
    if (jarX.status !== 0) {
      throw fail('JMETER_NOT_UNPACKED')
    }
  }
  writeFileSync(join(layout, '.complete'), `${JMETER_VERSION}\n`)
  rmSync(home, { recursive: true, force: true })
  mkdirSync(join(home, '..'), { recursive: true })
  renameSync(layout, home)
  rmSync(work, { recursive: true, force: true })
  log(`JMeter ${JMETER_VERSION} installed in ${home}`)
  return { home, jar }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureJmeter({ log: l => console.error(l) })
    .then(({ home }) => console.log(home))
    .catch(err => { console.error(formatError(err)); process.exit(exitCodeOf(err)) })
}

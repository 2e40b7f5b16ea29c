// Splits a command line into program and arguments the way a POSIX shell would quote them, and finds the program.
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join, resolve } from 'node:path'

/**
 * Splits a command line into words: whitespace separates, '...' is literal, "..." allows \" \\ \$ \`, \ escapes outside
 * quotes. No expansion of any kind: the program runs without a shell.
 * @param {string} line
 * @returns {string[]}
 * @throws {Error} on an unterminated quote or a trailing backslash
 */
export function splitCommandLine (line) {
  const words = []
  let word = ''
  let inWord = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new Error(`unterminated ' at position ${i}`)
      word += line.slice(i + 1, end)
      inWord = true
      i = end
    } else if (c === '"') {
      inWord = true
      let j = i + 1
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && '"\\$`'.includes(line[j + 1] ?? '')) j++
        word += line[j]
      }
      if (j >= line.length) throw new Error(`unterminated " at position ${i}`)
      i = j
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('trailing backslash')
      word += line[++i]
      inWord = true
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word)
      word = ''
      inWord = false
    } else {
      word += c
      inWord = true
    }
  }
  if (inWord) words.push(word)
  return words
}

function isExecutableFile (path) {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * Where a program would run from: a path (relative to cwd) if it contains a slash, else the first match on PATH.
 * @param {string} program
 * @param {{ cwd?: string, path?: string }} [opts]
 * @returns {string|null} the absolute path, or null when there is no such executable
 */
export function findProgram (program, { cwd = process.cwd(), path = process.env.PATH ?? '' } = {}) {
  if (program.includes('/')) {
    const abs = isAbsolute(program) ? program : resolve(cwd, program)
    return isExecutableFile(abs) ? abs : null
  }
  for (const dir of path.split(delimiter)) {
    if (!dir) continue
    const candidate = join(dir, program)
    if (isExecutableFile(candidate)) return candidate
  }
  return null
}

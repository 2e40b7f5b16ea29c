// Lint config: neostandard (standard style for modern ESM), no TypeScript rules.
import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: false, ignores: ['node_modules/**', 'results/**', 'test-output/**', 'test/fixtures/**'] })
]

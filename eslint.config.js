// Lint config: neostandard (standard style for modern ESM), no TypeScript rules; comments kept to 120 columns.
import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: false, ignores: ['node_modules/**', 'results/**', 'test-output/**', 'test/fixtures/**'] }),
  { rules: { '@stylistic/max-len': ['error', { code: 1000, comments: 120, ignoreUrls: true }] } }
]

// Lint config: neostandard (standard style for modern ESM), no TypeScript rules; code lines kept to 160 columns,
// comments to 120.
import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: false, ignores: ['node_modules/**', 'results/**', 'test-output/**', 'test/fixtures/**'] }),
  { rules: { '@stylistic/max-len': ['error', { code: 160, comments: 120, ignoreUrls: true }] } }
]

// Example custom app in its smallest form: one express handler, mounted at /<--benchmark name>.
// Run it:  npx executor run --strategy up --instances 1 --benchmark hello --app benchmarks/examples/hello-handler.js
export default (req, res) => {
  res.setHeader('content-type', 'text/plain')
  res.end('hello\n')
}

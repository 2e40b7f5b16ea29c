// The resource collector library: per-core CPU of the server under test and of the host.
export { readProcStat, parseProcStat, coreUsage } from './proc-stat.js'
export { readUsagePercpu, readCpuStat, readCgroupProcs, detectCgroup, cpuacctRoot } from './cgroup.js'
export { createCpuGroup } from './cpu-group.js'
export { createThreadCpu, parseTaskStat } from './thread-cpu.js'
export { createSampler } from './sampler.js'
export { summarizeCpu } from './cpu-summary.js'

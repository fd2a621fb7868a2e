export {
  parseProcStat,
  cpuPercentages,
  type CpuTimes,
  type CpuPercentages,
  type ProcStat,
} from './proc-stat.js';
export { parseMeminfo, type MemInfo } from './meminfo.js';
export { parseNetDev, type InterfaceCounters } from './net-dev.js';
export {
  parseCgroupPath,
  parseCpuMax,
  parseCpuStat,
  parseMemoryMax,
  parseMemoryCurrent,
  parseCgroupV1Membership,
  parseCfsQuota,
  parseCpuacct,
  type CgroupCpuUsage,
  type CgroupV1Membership,
} from './cgroup.js';

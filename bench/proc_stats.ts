/** What the benches read of a process's and the machine's use: memory and CPU time (Linux /proc). */

/** Resident set size of process `pid` in bytes (VmRSS of /proc/<pid>/status). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

/** CPU time (user + system, ms) process `pid` has used so far. */
export async function cpuMs(pid: number | "self"): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ is 100 on Linux
}

/** CPU time (ms) all processes on the machine have used so far (/proc/stat, without idle and
 * iowait). */
export async function machineCpuMs(): Promise<number> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = line.trim().split(/\s+/)
    .slice(1).map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) * 10; // USER_HZ is 100
}

import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * A process held to a share of one core, as a container's CPU limit holds a replica: a cgroup of
 * its own with a CFS quota. It lets a two-core machine show what a process adds where the
 * machine has cores to spare (the API scale-out scenario). Needs root and the cpu controller:
 * cgroup v1's /sys/fs/cgroup/cpu, or cgroup v2 with cpu among the root's controllers.
 */
export interface CpuBudget {
  /** Moves the process, all its threads, into the budget. */
  confine(pid: number): void;
  /** Scheduler periods in which the group ran, and those of them that ended with its quota spent. */
  periods(): { ran: number; throttled: number };
  /** Moves whatever is left in it back to the root group and removes the group. */
  release(): void;
}

/** A short period keeps the wait after an exhausted quota short (the kernel's default is 100 ms). */
const PERIOD_US = 20_000;
const V1_ROOT = "/sys/fs/cgroup/cpu";
const V2_ROOT = "/sys/fs/cgroup";

type Hierarchy = { root: string; limit: (dir: string, quotaUs: number) => void };

function hierarchy(): Hierarchy {
  if (existsSync(path.join(V1_ROOT, "cpu.cfs_quota_us")))
    return {
      root: V1_ROOT,
      limit: (dir, quotaUs) => {
        writeFileSync(path.join(dir, "cpu.cfs_period_us"), String(PERIOD_US));
        writeFileSync(path.join(dir, "cpu.cfs_quota_us"), String(quotaUs));
      },
    };
  const controllers = path.join(V2_ROOT, "cgroup.controllers");
  if (existsSync(controllers) && readFileSync(controllers, "utf8").split(/\s+/).includes("cpu")) {
    const subtree = path.join(V2_ROOT, "cgroup.subtree_control");
    if (!readFileSync(subtree, "utf8").split(/\s+/).includes("cpu")) writeFileSync(subtree, "+cpu");
    return {
      root: V2_ROOT,
      limit: (dir, quotaUs) => writeFileSync(path.join(dir, "cpu.max"), `${quotaUs} ${PERIOD_US}`),
    };
  }
  throw new Error("no cgroup cpu controller here (/sys/fs/cgroup/cpu or cgroup v2 with cpu)");
}

/** Why CPU budgets cannot be set here (a probe group is made and removed), or null where they can. */
export function cpuBudgetsUnavailable(): string | null {
  try {
    cpuBudget("probe", 1_000).release();
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** A budget of millicores thousandths of one core; throws, saying why, where it cannot be set. */
export function cpuBudget(label: string, millicores: number): CpuBudget {
  let where: Hierarchy;
  const dir = (root: string) => path.join(root, `shiri-bench-${process.pid}-${label}`);
  try {
    where = hierarchy();
    mkdirSync(dir(where.root));
    where.limit(dir(where.root), Math.round((PERIOD_US * millicores) / 1_000));
  } catch (err) {
    throw new Error(
      `a CPU budget needs root and a writable cgroup cpu controller: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const group = dir(where.root);
  const procs = (of: string) => path.join(of, "cgroup.procs");
  return {
    confine: (pid) => writeFileSync(procs(group), String(pid)),
    periods() {
      // cpu.stat's nr_periods and nr_throttled, named alike in v1 and v2.
      const stat = new Map(
        readFileSync(path.join(group, "cpu.stat"), "utf8")
          .split("\n")
          .map((line) => line.split(" "))
          .map(([key, value]) => [key, Number(value)] as const),
      );
      return { ran: stat.get("nr_periods") ?? 0, throttled: stat.get("nr_throttled") ?? 0 };
    },
    release() {
      if (!existsSync(group)) return;
      for (const pid of readFileSync(procs(group), "utf8").split("\n").filter(Boolean)) {
        // A process may exit between the read and the write.
        try {
          writeFileSync(procs(where.root), pid);
        } catch {}
      }
      rmdirSync(group);
    },
  };
}

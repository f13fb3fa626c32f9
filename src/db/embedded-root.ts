import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { type Stats, statSync } from "node:fs";
import { chmod, cp, lstat, mkdir, readdir, realpath, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

/**
 * Postgres refuses to run as root, so as root the embedded server runs as the OS user
 * "postgres". That user must reach its binaries and its data by path, which a checkout inside a
 * home directory of mode 0700 (/root) does not allow. This module finds or creates the user and,
 * when the checkout is out of its reach, places a copy of the binaries and the data under a
 * root-owned folder it can enter (/var/lib/shiri, else a folder in the temporary directory).
 */
export interface OsUser {
  uid: number;
  gid: number;
}

const exec = promisify(execFile);
const NAME = "postgres";

async function lookUp(name: string): Promise<OsUser | null> {
  try {
    const [uid, gid] = await Promise.all([exec("id", ["-u", name]), exec("id", ["-g", name])]);
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  } catch {
    return null;
  }
}

/** The user "postgres", created as a system user without a home when missing. */
export async function postgresUser(): Promise<OsUser> {
  const found = await lookUp(NAME);
  if (found) return found;
  const shell = ["--no-create-home", "--shell", "/usr/sbin/nologin", NAME];
  // The second form is for a system where the group "postgres" exists without the user.
  for (const args of [
    ["--system", "--user-group", ...shell],
    ["--system", "--gid", NAME, ...shell],
  ]) {
    try {
      await exec("useradd", args);
      break;
    } catch {
      // try the next form; the look-up below says whether any worked
    }
  }
  const created = await lookUp(NAME);
  if (!created) {
    throw new Error(
      'as root Postgres must run as another OS user, and user "postgres" does not exist and could not be created (useradd --system postgres)',
    );
  }
  return created;
}

/** Whether the mode bits grant `bits` (read 4, write 2, search 1) to the user; spawn drops supplementary groups. */
function grants(st: Stats, user: OsUser, bits: number): boolean {
  if (st.uid === user.uid) return ((st.mode >> 6) & bits) === bits;
  if (st.gid === user.gid) return ((st.mode >> 3) & bits) === bits;
  return (st.mode & bits) === bits;
}

/** Whether the user can enter every directory from / down to `dir`, and read `files` in it. */
export async function reachableBy(dir: string, user: OsUser, files: string[] = []): Promise<boolean> {
  let current: string;
  try {
    current = await realpath(dir);
  } catch {
    return false;
  }
  for (;;) {
    if (!grants(statSync(current), user, 1)) return false;
    const up = path.dirname(current);
    if (up === current) break;
    current = up;
  }
  try {
    for (const file of files) if (!grants(await stat(path.join(dir, file)), user, 4)) return false;
  } catch {
    return false;
  }
  return true;
}

/** A root-owned folder, writable by root only, that the user can enter. */
export async function rootStateDir(user: OsUser): Promise<string> {
  for (const candidate of ["/var/lib/shiri", path.join(tmpdir(), "shiri-root")]) {
    try {
      await mkdir(candidate, { recursive: true, mode: 0o755 });
      const st = await lstat(candidate);
      // A folder someone else made (the temporary directory is shared) is not trusted.
      if (!st.isDirectory() || st.uid !== 0) continue;
      await chmod(candidate, 0o755);
      if (await reachableBy(candidate, user)) return candidate;
    } catch {
      // read-only or missing: try the next place
    }
  }
  throw new Error(
    "no folder the postgres user can enter could be made under /var/lib or the temporary directory",
  );
}

/** A stable folder per data directory: the same checkout finds its data again after a restart. */
export function relocatedDataDir(dataDir: string, stateDir: string): string {
  const absolute = path.resolve(dataDir);
  const hash = createHash("sha256").update(absolute).digest("hex").slice(0, 10);
  const words = absolute
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(-60);
  return path.join(stateDir, "data", `${words}-${hash}`);
}

/** The binaries where the user can run them: in place when it reaches them, else a copy made once per version. */
export async function reachableBinaries(
  nativeDir: string,
  version: string,
  user: OsUser,
  stateDir: () => Promise<string>,
): Promise<string> {
  const needed = ["bin/postgres", "bin/initdb"];
  if (await reachableBy(nativeDir, user, needed)) return nativeDir;
  const copy = path.join(await stateDir(), `postgres-${version}`);
  if (await reachableBy(copy, user, needed)) return copy;
  const partial = `${copy}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  // Library symlinks are relative (libpq.so -> libpq.so.5); kept as they are, they point inside the copy.
  await cp(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
  await openToAll(partial);
  try {
    await rename(partial, copy);
  } catch (err) {
    // Another process finished the same copy first.
    await rm(partial, { recursive: true, force: true });
    if (!(await reachableBy(copy, user, needed))) throw err;
  }
  return copy;
}

/** Read (and search or run, where the owner may) for everyone: the checkout may have been made under umask 077. */
async function openToAll(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const mode = (await stat(file)).mode & 0o777;
    const runnable = entry.isDirectory() || (mode & 0o100) !== 0;
    await chmod(file, mode | 0o444 | (runnable ? 0o111 : 0));
  }
}

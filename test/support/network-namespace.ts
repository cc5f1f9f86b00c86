import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A network namespace joined to this machine by a veth pair: a second host on a private network, from
 * which this machine is reached at `hostAddress`, an address that is not loopback. Browsers treat
 * 127.0.0.1 and localhost as secure and never upgrade their requests, so what a browser on another machine
 * sees can only be tried from an address like this one. Needs root and iproute2 (`ip`), as CI has.
 */
export interface NetworkNamespace {
  name: string;
  /** This machine's address on the veth pair, reachable from inside the namespace. */
  hostAddress: string;
  /** A script that runs `executable` (with its arguments) inside the namespace. */
  wrap(executable: string): Promise<string>;
  /** Deletes the namespace (and with it both ends of the veth pair) and the wrapper scripts. */
  remove(): Promise<void>;
}

export async function createNetworkNamespace(): Promise<NetworkNamespace> {
  // Names of at most 15 characters, and a /24 of 10.213.0.0/16, both of this process's own.
  const id = process.pid;
  const subnet = `10.213.${id % 250}`;
  const name = `ht${id}`;
  const [hostEnd, namespaceEnd] = [`ht${id}h`, `ht${id}n`];
  const scripts = await mkdtemp(join(tmpdir(), 'hooktrail-netns-'));
  const remove = async () => {
    await run('ip', ['netns', 'delete', name]).catch(() => undefined);
    await run('ip', ['link', 'delete', hostEnd]).catch(() => undefined);
    await rm(scripts, { recursive: true, force: true });
  };
  try {
    await run('ip', ['netns', 'add', name]);
    await run('ip', ['link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', namespaceEnd]);
    await run('ip', ['link', 'set', namespaceEnd, 'netns', name]);
    await run('ip', ['addr', 'add', `${subnet}.1/24`, 'dev', hostEnd]);
    await run('ip', ['link', 'set', hostEnd, 'up']);
    const inside = ['netns', 'exec', name, 'ip'];
    await run('ip', [...inside, 'addr', 'add', `${subnet}.2/24`, 'dev', namespaceEnd]);
    await run('ip', [...inside, 'link', 'set', namespaceEnd, 'up']);
    await run('ip', [...inside, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    name,
    hostAddress: `${subnet}.1`,
    async wrap(executable) {
      const script = join(scripts, executable.replace(/\W/g, '_'));
      await writeFile(script, `#!/bin/sh\nexec ip netns exec ${name} ${executable} "$@"\n`);
      await chmod(script, 0o755);
      return script;
    },
    remove,
  };
}

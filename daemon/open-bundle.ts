/**
 * `cnirec open`: a bundle served read-only, anywhere, without root, bpftrace
 * or a CNI setup — the same API, web view and thereby CLI and `cnirec mcp`,
 * over the bundle's record. Nothing live: no collector, no tail of new calls,
 * no capture switch, no cache or conf watcher, and no doctor of the machine it
 * runs on (the node's report comes from the bundle). Every answer carries the
 * bundle's node and time (GET /api/v1/source, the cnirec-bundle header).
 */

import { buildApp } from '../api/index.js';
import { latestVersion, openDatabase, restoreIndexes, StoreError, type Database } from '../store/index.js';
import { bundleDeps, type OpenOptions } from './bundle-api-deps.js';
import type { BundleManifest } from './bundle-manifest.js';
import { BundleError } from './make-bundle.js';
import { readBundle, type OpenedBundle } from './read-bundle.js';

export type { OpenOptions } from './bundle-api-deps.js';

export interface ServedBundle {
  readonly url: string;
  readonly manifest: BundleManifest;
  /** The record's schema before this cnirec upgraded it to its own; null when it was current. */
  readonly upgradedFrom: number | null;
  close(): Promise<void>;
}

export async function serveBundle(file: string, opts: OpenOptions): Promise<ServedBundle> {
  const bundle = await readBundle(file, opts.tmpDir);
  let db: Database | null = null;
  try {
    db = openRecord(bundle);
    const deps = await bundleDeps(bundle, db, opts);
    const app = await buildApp(deps);
    let url: string;
    try {
      url = await app.listen({ host: opts.listen.host, port: opts.listen.port });
    } catch (err) {
      await app.close();
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new BundleError(`${opts.listen.host}:${opts.listen.port} is in use (a cnirec daemon on this machine?): pass --listen 127.0.0.1:7071, and --api 127.0.0.1:7071 to the commands.`);
      throw err;
    }
    const served = db;
    return {
      url,
      manifest: bundle.manifest,
      upgradedFrom: bundle.manifest.schemaVersion < latestVersion() ? bundle.manifest.schemaVersion : null,
      async close() {
        await app.close();
        served.close();
        await bundle.cleanup();
      },
    };
  } catch (err) {
    db?.close();
    await bundle.cleanup();
    throw err;
  }
}

/** The record, brought to this build's schema (an older bundle's copy is upgraded in place; a newer one is refused). */
function openRecord(bundle: OpenedBundle): Database {
  const m = bundle.manifest;
  try {
    // The indexes its schema has (left out of bundles), then this build's migrations.
    restoreIndexes(bundle.recordFile);
    return openDatabase(bundle.recordFile);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'schema-too-new') {
      throw new BundleError(`${bundle.file} holds a record of schema ${m.schemaVersion}, made by cnirec ${m.cnirec}; this cnirec reads schemas up to ${latestVersion()}: open it with cnirec ${m.cnirec} or newer.`);
    }
    if (err instanceof StoreError) throw new BundleError(`${bundle.file} holds a record this cnirec cannot open (${err.message})`);
    throw err;
  }
}

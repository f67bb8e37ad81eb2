/**
 * A conformance ServerDriver for Syncular for Jakarta EE: drives a running server in conformance-host mode
 * (`mvn -Prun -Dsyncular.conformance-host=true -Dsyncular.port=8787`) over HTTP and WebSocket, black-box.
 *
 * Our own code, written against the upstream conformance driver interface of release 0.15.48
 * (packages/conformance/src/driver.ts). It is copied next to the upstream catalog by `run.sh` at run time;
 * nothing of upstream is committed here.
 */
import type {
  BlobDownloadResult,
  BlobUploadGrantResult,
  BytesResult,
  CommitValidatorInstallSpec,
  DriverError,
  DriverScopeMap,
  RealtimeConnectResult,
  RealtimeSink,
  RetentionOptions,
  ServerCapability,
  ServerCreateOptions,
  ServerDriver,
  ServerInstance,
  ServerRowState,
  ValidatorInstallSpec,
} from '../src/driver';

const BASE = (process.env.SYNCULAR_URL ?? 'http://localhost:8787/syncular').replace(/\/$/, '');
const CONTROL = `${BASE}/__conformance`;
const SYNC_MEDIA_TYPE = 'application/vnd.syncular.sync.v2';

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${CONTROL}/${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (response.status !== 200) {
    throw new Error(`conformance control ${method} ${path} answered ${response.status}: ${text}`);
  }
  return JSON.parse(text);
}

/** A §10.1 JSON error body as the driver's error shape; anything else is a harness failure. */
async function errorOf(response: Response): Promise<DriverError> {
  const text = await response.text();
  let parsed: DriverError;
  try {
    parsed = JSON.parse(text) as DriverError;
  } catch {
    throw new Error(`server answered ${response.status} without a JSON error body: ${text.slice(0, 200)}`);
  }
  if (typeof parsed.code !== 'string') {
    throw new Error(`server answered ${response.status} with a body lacking "code": ${text.slice(0, 200)}`);
  }
  return parsed;
}

async function bytesResult(response: Response): Promise<BytesResult> {
  if (response.status === 200) return { ok: true, bytes: new Uint8Array(await response.arrayBuffer()) };
  return { ok: false, error: await errorOf(response) };
}

class HttpServerInstance implements ServerInstance {
  async handleSyncRequest(actorId: string, request: Uint8Array): Promise<BytesResult> {
    return bytesResult(
      await fetch(`${BASE}/sync`, {
        method: 'POST',
        headers: { 'Content-Type': SYNC_MEDIA_TYPE, 'X-Syncular-Actor': actorId },
        body: request,
      }),
    );
  }

  async downloadSegment(actorId: string, segmentId: string, scopesHeaderJson: string): Promise<BytesResult> {
    return bytesResult(
      await fetch(`${BASE}/segments/${encodeURIComponent(segmentId)}`, {
        headers: { 'X-Syncular-Actor': actorId, 'X-Syncular-Scopes': scopesHeaderJson },
      }),
    );
  }

  /** §5.9.3: the bytes PUT through the server, host-authenticated as the actor; an empty 200 is success. */
  async uploadBlob(
    actorId: string,
    blobId: string,
    bytes: Uint8Array,
    mediaType?: string,
  ): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: DriverError }> {
    const response = await fetch(`${BASE}/blobs/${encodeURIComponent(blobId)}`, {
      method: 'PUT',
      headers: { 'X-Syncular-Actor': actorId, 'Content-Type': mediaType ?? 'application/octet-stream' },
      body: bytes,
    });
    if (response.status === 200) {
      await response.arrayBuffer();
      return { ok: true };
    }
    return { ok: false, error: await errorOf(response) };
  }

  /**
   * §5.9.5: the bytes inline, or (blob presign on, always-issue) a JSON `{url, urlExpiresAtMs}` body, told apart as a
   * client's HTTP transport tells them: by the JSON media type and a string `url`.
   */
  async downloadBlob(actorId: string, blobId: string): Promise<BlobDownloadResult> {
    const response = await fetch(`${BASE}/blobs/${encodeURIComponent(blobId)}`, {
      headers: { 'X-Syncular-Actor': actorId },
    });
    if (response.status !== 200) return { ok: false, error: await errorOf(response) };
    const bytes = new Uint8Array(await response.arrayBuffer());
    if ((response.headers.get('content-type') ?? '').includes('application/json')) {
      const body = JSON.parse(new TextDecoder().decode(bytes)) as { url?: unknown; urlExpiresAtMs?: unknown };
      if (typeof body.url === 'string') {
        return {
          ok: true,
          url: body.url,
          ...(typeof body.urlExpiresAtMs === 'number' ? { urlExpiresAtMs: body.urlExpiresAtMs } : {}),
        };
      }
    }
    return { ok: true, bytes };
  }

  /** `blob-presign`: the CDN hop is the URL itself, fetched bare: no actor header, no credentials (§5.9.5). */
  async fetchBlobUrl(url: string): Promise<BytesResult> {
    return bytesResult(await fetch(url));
  }

  /** §5.9.3 upload grant, host-authenticated as the actor: a PUT URL, a present marker, or none (`{}`). */
  async uploadBlobGrant(
    actorId: string,
    blobId: string,
    byteLength: number,
    mediaType?: string,
  ): Promise<BlobUploadGrantResult> {
    const response = await fetch(`${BASE}/blobs/${encodeURIComponent(blobId)}/upload-grant`, {
      method: 'POST',
      headers: { 'X-Syncular-Actor': actorId, 'Content-Type': 'application/json' },
      body: JSON.stringify({ byteLength, ...(mediaType !== undefined ? { mediaType } : {}) }),
    });
    if (response.status !== 200) return { ok: false, error: await errorOf(response) };
    const body = (await response.json()) as { url?: unknown; urlExpiresAtMs?: unknown; present?: unknown };
    if (typeof body.url === 'string') {
      return {
        ok: true,
        grant: {
          kind: 'url',
          url: body.url,
          ...(typeof body.urlExpiresAtMs === 'number' ? { urlExpiresAtMs: body.urlExpiresAtMs } : {}),
        },
      };
    }
    if (body.present === true) return { ok: true, grant: { kind: 'present' } };
    return { ok: true, grant: { kind: 'none' } };
  }

  /** `blob-presign`: the object-store hop is a bare PUT of the granted URL, no credentials (§5.9.3). */
  async putBlobUrl(
    url: string,
    bytes: Uint8Array,
  ): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: DriverError }> {
    const response = await fetch(url, { method: 'PUT', headers: { 'Content-Type': 'application/octet-stream' }, body: bytes });
    if (response.status === 200) {
      await response.arrayBuffer();
      return { ok: true };
    }
    return { ok: false, error: await errorOf(response) };
  }

  /** `blob-presign`: the host mints blob URLs under the address this harness reaches it by, which only we know. */
  async setBlobPresign(enabled: boolean): Promise<void> {
    await control('POST', 'blobs/presign', enabled ? { enabled, baseUrl: `${BASE}/blobs` } : { enabled });
  }

  /** `signed-urls`: the URL as a client fetches it, bare: no actor header, no scopes, no credentials (§5.4). */
  async fetchSegmentUrl(url: string): Promise<BytesResult> {
    return bytesResult(await fetch(url));
  }

  async setSignedUrlTtlSeconds(ttlSeconds: number): Promise<void> {
    await control('POST', 'signed-urls/ttl', { ttlSeconds });
  }

  async connectRealtime(actorId: string, clientId: string, sink: RealtimeSink): Promise<RealtimeConnectResult> {
    const url = `${BASE.replace(/^http/, 'ws')}/realtime?clientId=${encodeURIComponent(clientId)}&actor=${encodeURIComponent(actorId)}`;
    const socket = new WebSocket(url);
    socket.binaryType = 'arraybuffer';
    // The connection counts as attached once the server's hello (its first message, §8.1) has arrived: the in-process
    // reference driver delivers it during connect, and scenarios read it right after connecting.
    const opened = await new Promise<{ ok: true } | { ok: false; error: DriverError }>((resolve) => {
      socket.onmessage = (event) => {
        if (typeof event.data === 'string') sink.onText(event.data);
        else sink.onBinary(new Uint8Array(event.data as ArrayBuffer));
        resolve({ ok: true });
      };
      socket.onclose = (event) =>
        resolve({
          ok: false,
          error: { code: event.reason !== '' ? event.reason : 'sync.auth_required', message: `closed ${event.code}` },
        });
      socket.onerror = () => undefined; // the close event carries the outcome
    });
    if (!opened.ok) return opened;
    socket.onclose = () => sink.onClose?.();
    return {
      ok: true,
      connection: {
        send: (text) => socket.send(text),
        sendBinary: (bytes) => socket.send(bytes),
        close: () => socket.close(),
      },
    };
  }

  async setAllowedScopes(actorId: string, allowed: DriverScopeMap): Promise<void> {
    await control('PUT', `actors/${encodeURIComponent(actorId)}/allowed`, allowed);
  }

  async installValidators(specs: readonly ValidatorInstallSpec[]): Promise<void> {
    await control('POST', 'validators', specs);
  }

  async installCommitValidator(spec?: CommitValidatorInstallSpec): Promise<void> {
    await control('POST', 'commit-validator', spec === undefined ? {} : { spec });
  }

  async setResolverFailing(failing: boolean): Promise<void> {
    await control('POST', 'resolver', { failing });
  }

  async setResolverOutage(outage: boolean): Promise<void> {
    await control('POST', 'resolver', { outage });
  }

  async revokeLease(leaseId: string): Promise<void> {
    await control('POST', 'leases/revoke', { leaseId });
  }

  async captureBackup(): Promise<void> {
    await control('POST', 'backup/capture', {});
  }

  async restoreBackup(): Promise<void> {
    await control('POST', 'backup/restore', {});
  }

  async failNextIdempotencyLookup(): Promise<void> {
    await control('POST', 'faults/idempotency-lookup', {});
  }

  async advanceClock(ms: number): Promise<void> {
    await control('POST', 'clock/advance', { ms });
  }

  async nowMs(): Promise<number> {
    return ((await control('GET', 'clock')) as { nowMs: number }).nowMs;
  }

  async prune(retention?: RetentionOptions): Promise<number> {
    return ((await control('POST', 'prune', retention === undefined ? {} : { retention })) as { horizonSeq: number })
      .horizonSeq;
  }

  async getMaxCommitSeq(): Promise<number> {
    return ((await control('GET', 'max-commit-seq')) as { value: number }).value;
  }

  async getHorizonSeq(): Promise<number> {
    return ((await control('GET', 'horizon-seq')) as { value: number }).value;
  }

  async readRows(table: string): Promise<ServerRowState[]> {
    return (await control('GET', `tables/${encodeURIComponent(table)}/rows`)) as ServerRowState[];
  }

  async close(): Promise<void> {}
}

const capabilities = ((await control('GET', 'capabilities')) as { capabilities: ServerCapability[] }).capabilities;

export const httpServerDriver: ServerDriver = {
  name: 'syncular-jakarta',
  capabilities,
  async create(options: ServerCreateOptions): Promise<ServerInstance> {
    // signed-urls: the host mints URLs under the address this harness reaches it by, which only the driver knows
    await control(
      'POST',
      'reset',
      options.signedUrls === undefined
        ? options
        : { ...options, signedUrls: { ...options.signedUrls, baseUrl: `${BASE}/segments` } },
    );
    return new HttpServerInstance();
  },
};

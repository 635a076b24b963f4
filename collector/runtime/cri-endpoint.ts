/**
 * Where the runtime's CRI socket is: `--cri-endpoint` as crictl takes it (a
 * socket path or a `unix://` URL), `none` to turn the runtime's side off, or
 * empty for the sockets the common runtimes listen on, tried in order. Pure.
 */

/** containerd, k3s's containerd, CRI-O: the first that answers is asked. */
export const DEFAULT_CRI_ENDPOINTS = ['/run/containerd/containerd.sock', '/run/k3s/containerd/containerd.sock', '/var/run/crio/crio.sock'] as const;

export type CriEndpointSetting =
  | { readonly kind: 'off' }
  | { readonly kind: 'auto'; readonly candidates: readonly string[] }
  | { readonly kind: 'fixed'; readonly path: string };

export type ParsedCriEndpoint = { readonly ok: true; readonly setting: CriEndpointSetting } | { readonly ok: false; readonly message: string };

export function parseCriEndpoint(text: string): ParsedCriEndpoint {
  const t = text.trim();
  if (t === '') return { ok: true, setting: { kind: 'auto', candidates: DEFAULT_CRI_ENDPOINTS } };
  if (t === 'none') return { ok: true, setting: { kind: 'off' } };
  // crictl's forms: unix:///run/x.sock (and the unix:/run/x.sock some write); a bare path.
  const path = t.startsWith('unix://') ? t.slice('unix://'.length) : t.startsWith('unix:') ? t.slice('unix:'.length) : t;
  if (t.includes('://') && !t.startsWith('unix://')) {
    return { ok: false, message: `must be a unix socket path or a unix:// URL (the CRI is served on the node's socket), not "${t}"` };
  }
  if (!path.startsWith('/')) return { ok: false, message: `must be an absolute socket path (e.g. /run/containerd/containerd.sock), not "${t}"` };
  return { ok: true, setting: { kind: 'fixed', path } };
}

/** The gRPC target of a socket path. */
export const grpcTarget = (path: string): string => `unix://${path}`;

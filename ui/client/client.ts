/**
 * Talks to the daemon that served the page: JSON over fetch with the token as a header, never in a URL.
 * The token is kept in sessionStorage (this tab only, gone when it closes). A 401 asks the page for the
 * token (`onTokenNeeded`), then the page retries.
 */

const TOKEN_KEY = 'cnirec.token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage refused (private mode): the token lasts until reload.
  }
  memoryToken = token;
}

let memoryToken: string | null = null;
const currentToken = () => storedToken() ?? memoryToken;

type TokenListener = () => void;
const tokenListeners = new Set<TokenListener>();

/** Called when the daemon refused the request for want of a (right) token. */
export function onTokenNeeded(listener: TokenListener): () => void {
  tokenListeners.add(listener);
  return () => tokenListeners.delete(listener);
}

export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const token = currentToken();
  return token ? { ...extra, authorization: `Bearer ${token}` } : extra;
}

async function answer(response: Response): Promise<Response> {
  if (response.ok) return response;
  if (response.status === 401) for (const l of tokenListeners) l();
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { error?: { message?: string } };
    if (body.error?.message) message = body.error.message;
  } catch {
    // Not a JSON error body: the status says enough.
  }
  throw new ApiRequestError(response.status, message);
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await answer(await fetch(path, { headers: headers({ accept: 'application/json' }), signal }));
  return (await response.json()) as T;
}

export async function getText(path: string, signal?: AbortSignal): Promise<string> {
  const response = await answer(await fetch(path, { headers: headers(), signal }));
  return response.text();
}

export async function putJson<T>(path: string, body: unknown): Promise<T> {
  const response = await answer(await fetch(path, { method: 'PUT', headers: headers({ 'content-type': 'application/json', accept: 'application/json' }), body: JSON.stringify(body) }));
  return (await response.json()) as T;
}

/** A file the daemon makes (a bundle): its bytes and the name it gives it (Content-Disposition). */
export async function getFile(path: string): Promise<{ blob: Blob; name: string | null }> {
  const response = await answer(await fetch(path, { headers: headers() }));
  const name = /filename="([^"/]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? null;
  return { blob: await response.blob(), name };
}

/** The tail's websocket: the token rides as a subprotocol (browsers cannot set headers on a websocket). */
export function openTail(query: string): WebSocket {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const token = currentToken();
  const protocols = ['cnirec.v1', ...(token ? [`cnirec.token.${base64Url(token)}`] : [])];
  return new WebSocket(`${scheme}//${location.host}/api/v1/tail${query}`, protocols);
}

function base64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** GET /api/config from the Python server that serves this page. */
export interface ServerConfig {
  webtransport_url: string;
  certificate_sha256: string;
  default_cc?: string;
  server_version?: string;
  controllers?: string[];
}

/**
 * GET `url`, or take `started`: the same request sent earlier (index.html sends it while the
 * page loads, `window.pccstreamConfigRequest`).
 */
export async function fetchConfig(url = '/api/config', started?: Promise<Response>): Promise<ServerConfig> {
  const response = await (started ?? fetch(url, { cache: 'no-store' }));
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  const json: unknown = await response.json();
  if (typeof json !== 'object' || json === null) throw new Error(`GET ${url}: not a JSON object`);
  const c = json as Record<string, unknown>;
  if (typeof c['webtransport_url'] !== 'string' || typeof c['certificate_sha256'] !== 'string') {
    throw new Error(`GET ${url}: webtransport_url and certificate_sha256 must be strings`);
  }
  return c as unknown as ServerConfig;
}

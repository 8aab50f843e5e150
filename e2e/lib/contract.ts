/** Page URLs built against shared/contracts/player.json, as the Python harness builds them. */
import { readFileSync } from 'node:fs';

interface PageSpec {
  parameters: string[];
  forwarded_prefixes: string[];
}

const contract = JSON.parse(readFileSync(new URL('../../shared/contracts/player.json', import.meta.url), 'utf8')) as {
  pages: Record<string, PageSpec>;
};

export type PageName = 'player' | 'compare' | 'webrtc_sender' | 'webrtc_receiver';

/** `url` with `params` set on it; throws for a parameter the page does not define. */
export function contractUrl(url: URL, page: PageName, params: Record<string, string | number>): string {
  const spec = contract.pages[page];
  if (spec === undefined) throw new Error(`no page ${page} in shared/contracts/player.json`);
  for (const [key, value] of Object.entries(params)) {
    if (!spec.parameters.includes(key) && !spec.forwarded_prefixes.some((prefix) => key.startsWith(prefix))) {
      throw new Error(`${key}: not a URL parameter of the ${page} page (shared/contracts/player.json)`);
    }
    url.searchParams.set(key, String(value));
  }
  return url.toString();
}

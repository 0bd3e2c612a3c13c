/**
 * Whether an MCP upstream's address may be registered. A gateway fetches what an operator types,
 * so an address is a way to make the Worker call something it should not: a cloud metadata
 * service, an address on the operator's own network, or plain HTTP that anyone on the path can
 * read and rewrite. Outside local development an upstream is `https://` to a public host; private,
 * loopback, link-local, shared (carrier-grade NAT), unique-local, multicast and metadata addresses
 * are refused unless `allowPrivate` (local development and the tests, which serve upstreams on
 * loopback over plain HTTP). Pure: the address is read as the WHATWG URL parser reads it, so the
 * spellings of one address (`2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`) are the same address.
 *
 * A host name is not resolved here (a Worker cannot resolve before it fetches); on Cloudflare a
 * Worker's `fetch` does not reach private addresses, and names that only mean a private network
 * (`localhost`, `*.local`, `*.internal`, `*.localhost`) are refused by name.
 */

export type UpstreamUrlRefusal =
  | 'not_a_url'
  | 'scheme'
  | 'credentials'
  | 'private_address'
  | 'metadata_address'
  | 'private_name';

export type UpstreamUrlCheck = { ok: true; url: string } | { ok: false; reason: UpstreamUrlRefusal; message: string };

const PRIVATE_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.lan'];
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'instance-data']);

/**
 * Checks `raw` as an upstream address; `allowPrivate` admits private and loopback hosts and plain
 * HTTP. `label` names the address in the messages (a tool's test endpoint is held to the same rule).
 */
export function checkUpstreamUrl(raw: string, options: { allowPrivate: boolean; label?: string }): UpstreamUrlCheck {
  const label = options.label ?? 'upstream';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('not_a_url', `the ${label} url is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.allowPrivate)) {
    return refuse(
      'scheme',
      options.allowPrivate
        ? `the ${label} url must be http:// or https://`
        : `the ${label} url must be https:// (plain http is only for local development)`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    return refuse('credentials', `the ${label} url must not carry credentials; send them as the Authorization header`);
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const ip = host.startsWith('[') ? ipv6Class(host.slice(1, -1)) : ipv4Class(host);
  if (ip === 'metadata' || METADATA_NAMES.has(host)) {
    // Never allowed, not even in local development: no test needs the cloud's metadata service.
    return refuse('metadata_address', `the ${label} host ${host} is a cloud metadata address`);
  }
  if (options.allowPrivate) return { ok: true, url: url.href };
  if (ip === 'private') {
    return refuse('private_address', `the ${label} host ${host} is a private, loopback or link-local address`);
  }
  if (ip === null && (host === 'localhost' || PRIVATE_SUFFIXES.some((s) => host.endsWith(s)) || !host.includes('.'))) {
    return refuse('private_name', `the ${label} host ${host} names a private network, not a public host`);
  }
  return { ok: true, url: url.href };
}

function refuse(reason: UpstreamUrlRefusal, message: string): UpstreamUrlCheck {
  return { ok: false, reason, message };
}

type AddressClass = 'public' | 'private' | 'metadata' | null;

/** The class of a dotted IPv4 address as the URL parser writes it, or null for a host name. */
function ipv4Class(host: string): AddressClass {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const [a, b, c, d] = m.slice(1).map(Number) as [number, number, number, number];
  if (a === 169 && b === 254 && c === 169 && d === 254) return 'metadata';
  if (a === 100 && b === 100 && c === 100 && d === 200) return 'metadata'; // Alibaba Cloud
  const isPrivate =
    a === 0 || // "this network", 0.0.0.0 reaches the host itself
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // shared address space (carrier-grade NAT)
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && c === 0) || // IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224; // multicast and reserved
  return isPrivate ? 'private' : 'public';
}

/** The class of an IPv6 address (without brackets) as the URL parser writes it (compressed, lower case). */
function ipv6Class(host: string): AddressClass {
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const hi = Number.parseInt(mapped[1] ?? '0', 16);
    const lo = Number.parseInt(mapped[2] ?? '0', 16);
    return ipv4Class(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`) ?? 'private';
  }
  if (host === 'fd00:ec2::254') return 'metadata'; // AWS over IPv6
  if (host === '::' || host === '::1') return 'private';
  const first = Number.parseInt(host.split(':')[0] || '0', 16);
  if ((first & 0xfe00) === 0xfc00) return 'private'; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return 'private'; // link-local fe80::/10
  if ((first & 0xff00) === 0xff00) return 'private'; // multicast
  if (host.startsWith('64:ff9b:')) return 'private'; // NAT64 reaches IPv4 behind it
  return 'public';
}

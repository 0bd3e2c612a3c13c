import { describe, expect, it } from 'vitest';
import { checkUpstreamUrl } from '../../src/core/upstream-url.ts';

const production = { allowPrivate: false };
const local = { allowPrivate: true };
const reason = (raw: string, options = production) => {
  const r = checkUpstreamUrl(raw, options);
  return r.ok ? 'ok' : r.reason;
};

/** Every address of `raws` gets `why` (in production unless told); a failure names the address. */
function expectReason(why: string, raws: string[], options = production): void {
  for (const raw of raws) expect(reason(raw, options), raw).toBe(why);
}

describe('upstream addresses', () => {
  it('takes a public https address, as the parser writes it', () => {
    expect(checkUpstreamUrl('https://MCP.Example.com/mcp', production)).toEqual({
      ok: true,
      url: 'https://mcp.example.com/mcp',
    });
    expectReason('ok', ['https://93.184.216.34/mcp', 'https://[2606:2800:220:1:248:1893:25c8:1946]/mcp']);
  });

  it('refuses plain http, other schemes and credentials in the address outside local development', () => {
    expectReason('scheme', ['http://mcp.example.com/mcp', 'ftp://mcp.example.com/', 'file:///etc/passwd']);
    expectReason('credentials', ['https://user:secret@mcp.example.com/']);
    expectReason('not_a_url', ['not a url']);
    const refused = checkUpstreamUrl('http://mcp.example.com/', production);
    expect(refused.ok ? '' : refused.message).toContain('https://');
  });

  it('refuses private, loopback, link-local and shared addresses in every spelling of them', () => {
    expectReason('private_address', [
      'https://127.0.0.1/',
      'https://2130706433/', // 127.0.0.1 as one number
      'https://0x7f.1/', // 127.0.0.1 in hex and short form
      'https://0.0.0.0/',
      'https://10.1.2.3/',
      'https://172.20.0.1/',
      'https://192.168.1.1/',
      'https://169.254.10.10/',
      'https://100.64.0.1/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:10.0.0.1]/',
      'https://[fd12:3456::1]/',
      'https://[fe80::1]/',
      'https://224.0.0.1/',
    ]);
  });

  it('refuses names that only mean a private network', () => {
    expectReason('private_name', [
      'https://localhost/',
      'https://api.localhost/',
      'https://printer.local/',
      'https://db.internal/',
      'https://intranet/',
    ]);
  });

  it('refuses the cloud metadata services even in local development', () => {
    for (const raw of [
      'http://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://[::ffff:169.254.169.254]/',
    ]) {
      expect({ raw, local: reason(raw, local), production: reason(raw) }).toEqual({
        raw,
        local: 'metadata_address',
        production: raw.startsWith('http:') ? 'scheme' : 'metadata_address',
      });
    }
  });

  it('in local development takes loopback over plain http, as the tests serve upstreams', () => {
    expectReason('ok', ['http://127.0.0.1:8799/mcp', 'http://localhost:8799/mcp'], local);
    expectReason('scheme', ['ftp://127.0.0.1/'], local);
  });
});

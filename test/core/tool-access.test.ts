import { describe, expect, it } from 'vitest';
import { toolAllowed } from '../../src/core/tool-access.ts';

describe('toolAllowed', () => {
  it('allows everything without lists', () => {
    expect(toolAllowed(null, 'read_file', 'files')).toBe(true);
    expect(toolAllowed({}, 'read_file', 'files')).toBe(true);
  });

  it('refuses a denied tool or any tool of a denied upstream, deny winning over allow', () => {
    const access = { allow: ['upstream:files', 'delete_file'], deny: ['delete_file', 'upstream:mail'] };
    expect(toolAllowed(access, 'read_file', 'files')).toBe(true);
    expect(toolAllowed(access, 'delete_file', 'files')).toBe(false);
    expect(toolAllowed(access, 'send_mail', 'mail')).toBe(false);
  });

  it('with an allow list allows only what it names, by tool or by upstream', () => {
    const access = { allow: ['get_weather', 'upstream:files'] };
    expect(toolAllowed(access, 'get_weather', 'weather')).toBe(true);
    expect(toolAllowed(access, 'write_file', 'files')).toBe(true);
    expect(toolAllowed(access, 'send_mail', 'mail')).toBe(false);
    expect(toolAllowed(access, 'own_tool', null)).toBe(false);
  });
});

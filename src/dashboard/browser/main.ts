/**
 * The dashboard's entry: sign-in, the agent picker and the agent's tabs. A token is checked with
 * `GET /v1/agents`: 200 is the admin (who may list agents), 403 an agent key (which reaches one
 * agent, so the user types its id), 401 a wrong token, shown as an error (docs/api.md rights).
 */
import type { AgentsAnswer, ViewContext, WhoAmI } from './api-types.ts';
import {
  agentPath,
  alertError,
  announce,
  ApiFailure,
  api,
  byId,
  describeFailure,
  el,
  fill,
  headRow,
  session,
  uid,
} from './core.ts';
import { renderInbox } from './inbox.ts';
import { renderOverview } from './overview.ts';
import { renderSettings, renderTools, renderUsage } from './tools.ts';
import { renderUpstreams } from './upstreams.ts';

type Render = (ctx: ViewContext, panel: HTMLElement) => Promise<void>;
interface Tab {
  key: string;
  label: string;
  render: Render;
}

const TABS: Tab[] = [
  { key: 'overview', label: 'Overview', render: renderOverview },
  { key: 'inbox', label: 'Inbox', render: renderInbox },
  { key: 'tools', label: 'Tools', render: renderTools },
  { key: 'usage', label: 'Usage and unregistered', render: renderUsage },
  { key: 'upstreams', label: 'Upstreams', render: renderUpstreams },
  { key: 'settings', label: 'Settings', render: renderSettings },
];

const main = byId('main');
/** From GET /v1/agents: the admin token, or an agent key. */
let role: 'admin' | 'key' | null = null;
/** From GET …/whoami for the open agent: the key's role and the rights the views show actions for. */
let who: WhoAmI | null = null;

const ROLE_TEXT: Record<WhoAmI['role'], string> = {
  admin: 'admin',
  operator: 'agent key · operator',
  agent: 'agent key · agent',
  approver: 'agent key · approver (applies, dismisses, undoes)',
  read_only: 'agent key · read-only',
};

function show(focus: boolean, ...nodes: Node[]): void {
  fill(main, nodes);
  if (focus) main.focus();
}

function renderSession(): void {
  const nav = byId('session');
  if (!session.token || !role) {
    nav.replaceChildren();
    return;
  }
  const id = uid('approver');
  const input = el('input', {
    id,
    type: 'text',
    value: session.approvedBy,
    autocomplete: 'name',
    placeholder: 'your name',
    oninput: () => {
      session.approvedBy = input.value.trim();
    },
  });
  fill(
    nav,
    el('span', { class: 'meta', text: who ? ROLE_TEXT[who.role] : role === 'admin' ? 'admin' : 'agent key' }),
    el('span', { class: 'inline' }, el('label', { for: id, text: 'Approve as' }), input),
    session.agent
      ? el('button', {
          type: 'button',
          text: role === 'admin' ? 'All agents' : 'Change agent',
          onclick: () => {
            session.agent = '';
            who = null;
            void start();
          },
        })
      : null,
    el('button', { type: 'button', text: 'Sign out', onclick: () => signOut('Signed out.') }),
  );
}

function signInForm(error?: string): void {
  const id = uid('token');
  const input = el('input', {
    id,
    type: 'password',
    autocomplete: 'off',
    required: true,
    'aria-describedby': `${id}-hint`,
  });
  const form = el(
    'form',
    {
      class: 'signin',
      'aria-labelledby': 'signin-title',
      novalidate: true,
      onsubmit: (e) => {
        e.preventDefault();
        void signIn(input.value.trim());
      },
    },
    el('h2', { id: 'signin-title', text: 'Sign in' }),
    el(
      'div',
      { class: 'field' },
      el('label', { for: id, text: 'Token' }),
      el('span', {
        id: `${id}-hint`,
        class: 'hint',
        text: 'The ADMIN_TOKEN or an agent key. It is kept in this browser tab only.',
      }),
      input,
    ),
    el('button', { type: 'submit', class: 'primary', text: 'Sign in' }),
  );
  show(false, form);
  input.focus();
  if (error) alertError(error);
}

async function detectRole(): Promise<void> {
  try {
    await api('GET', '/v1/agents');
    role = 'admin';
  } catch (err) {
    if (!(err instanceof ApiFailure) || err.status !== 403) throw err;
    role = 'key';
  }
}

async function signIn(token: string): Promise<void> {
  if (!token) return alertError('Enter a token to sign in.');
  session.token = token;
  try {
    await detectRole();
  } catch (err) {
    session.token = '';
    role = null;
    const wrong = err instanceof ApiFailure && err.status === 401;
    return signInForm(
      wrong ? `Sign-in failed: that token was not accepted (${(err as Error).message}).` : describeFailure(err),
    );
  }
  announce(role === 'admin' ? 'Signed in with the admin token.' : 'Signed in with an agent key.');
  return start();
}

function signOut(message?: string): void {
  session.token = '';
  session.agent = '';
  role = null;
  who = null;
  renderSession();
  signInForm();
  if (message) announce(message);
}

async function agentList(): Promise<void> {
  const { agents } = await api<AgentsAnswer>('GET', '/v1/agents');
  const rows = agents.map((a) =>
    el(
      'tr',
      {},
      el(
        'td',
        {},
        el('button', { type: 'button', class: 'link', text: a.agent, onclick: () => void openAgent(a.agent, 'inbox') }),
      ),
      el('td', { text: a.tools }),
      el('td', { text: a.calls }),
      el('td', { text: a.last_review_at || 'never' }),
    ),
  );
  show(
    true,
    el('h2', { text: 'Agents' }),
    agents.length === 0
      ? el('p', { class: 'empty', text: 'No agents yet: register tools with PUT /v1/agents/:agent/tools.' })
      : el(
          'table',
          {},
          el('caption', { class: 'visually-hidden', text: 'Agents' }),
          headRow(['Agent', 'Tools', 'Calls', 'Last review']),
          rows,
        ),
    agentForm('Open another agent'),
  );
}

function agentForm(title: string): HTMLFormElement {
  const id = uid('agent');
  const input = el('input', { id, type: 'text', required: true, value: session.agent });
  return el(
    'form',
    {
      class: 'card',
      novalidate: true,
      onsubmit: (e) => {
        e.preventDefault();
        void checkAgent(input.value.trim());
      },
    },
    el('h3', { text: title }),
    el('div', { class: 'field' }, el('label', { for: id, text: 'Agent id' }), input),
    el('button', { type: 'submit', class: 'primary', text: 'Open' }),
  );
}

async function checkAgent(agent: string): Promise<void> {
  if (!agent) return alertError('Enter an agent id.');
  try {
    await api('GET', agentPath(agent, 'config'));
  } catch (err) {
    const missing = err instanceof ApiFailure && err.status === 404;
    return alertError(missing ? `No agent "${agent}" that this token reaches.` : describeFailure(err));
  }
  return openAgent(agent, 'inbox');
}

async function openAgent(agent: string, tab: string, focusTab = false): Promise<void> {
  session.agent = agent;
  sessionStorage.setItem('ws.tab', tab);
  let me: WhoAmI;
  try {
    me = await api<WhoAmI>('GET', agentPath(agent, 'whoami'));
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      signOut();
      return alertError('Your token is no longer accepted; sign in again.');
    }
    return alertError(describeFailure(err));
  }
  who = me;
  renderSession();
  const view = TABS.find((t) => t.key === tab) ?? (TABS[0] as Tab);
  const panel = el(
    'section',
    { class: 'panel', 'aria-label': view.label },
    el('p', { class: 'empty', text: 'Loading…' }),
  );
  const buttons = TABS.map((t) =>
    el('button', {
      type: 'button',
      'aria-current': t.key === view.key ? 'page' : false,
      'data-tab': t.key,
      text: t.label,
      onclick: () => void openAgent(agent, t.key, true),
    }),
  );
  show(
    !focusTab,
    el('h2', { text: `Agent ${agent}` }),
    el('nav', { class: 'tabs', 'aria-label': 'Agent views' }, buttons),
    panel,
  );
  if (focusTab) main.querySelector<HTMLElement>(`[data-tab="${view.key}"]`)?.focus();
  const ctx: ViewContext = {
    agent,
    who: me,
    // After an action re-renders the view, the button that had focus is gone: keep keyboard users in <main>.
    reload: async () => {
      await render(view, ctx, panel);
      if (!document.activeElement || document.activeElement === document.body) main.focus();
    },
    open: (key) => openAgent(agent, key, true),
  };
  return render(view, ctx, panel);
}

async function render(view: Tab, ctx: ViewContext, panel: HTMLElement): Promise<void> {
  try {
    await view.render(ctx, panel);
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      signOut();
      return alertError('Your token is no longer accepted; sign in again.');
    }
    panel.replaceChildren(el('p', { class: 'empty', text: 'Could not load this view.' }));
    alertError(describeFailure(err));
  }
}

async function start(): Promise<void> {
  if (!session.token) {
    renderSession();
    return signInForm();
  }
  if (!role) {
    try {
      await detectRole();
    } catch (err) {
      session.token = '';
      return signInForm(describeFailure(err));
    }
  }
  renderSession();
  if (session.agent) return openAgent(session.agent, sessionStorage.getItem('ws.tab') || 'inbox');
  if (role === 'admin') return agentList().catch((err: unknown) => alertError(describeFailure(err)));
  return show(
    true,
    el('h2', { text: 'Choose the agent' }),
    el('p', { text: 'An agent key reaches one agent; type its id.' }),
    agentForm('Agent'),
  );
}

void start();

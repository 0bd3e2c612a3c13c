/**
 * /dashboard/main.js: sign-in, the agent picker and the agent's tabs. A token is checked with
 * `GET /v1/agents`: 200 is the admin (who may list agents), 403 an agent key (which reaches one
 * agent, so the user types its id), 401 a wrong token, shown as an error (docs/api.md rights).
 */
export const MAIN_JS = String.raw`
import { session, api, agentPath, el, fill, uid, announce, alertError, describeFailure, ApiFailure } from './core.js';
import { renderInbox } from './inbox.js';
import { renderTools, renderUsage, renderSettings } from './tools.js';
import { renderOverview } from './overview.js';

const main = document.getElementById('main');
const TABS = [
  ['overview', 'Overview', renderOverview],
  ['inbox', 'Inbox', renderInbox],
  ['tools', 'Tools', renderTools],
  ['usage', 'Usage and unregistered', renderUsage],
  ['settings', 'Settings', renderSettings],
];
let role = null; // 'admin' | 'key', from GET /v1/agents

function show(focus, ...nodes) {
  fill(main, nodes);
  if (focus) main.focus();
}

function renderSession() {
  const nav = document.getElementById('session');
  if (!session.token || !role) { nav.replaceChildren(); return; }
  const id = uid('approver');
  const input = el('input', { id, type: 'text', value: session.approvedBy, autocomplete: 'name', placeholder: 'your name',
    oninput: (e) => { session.approvedBy = e.target.value.trim(); } });
  fill(nav,
    el('span', { class: 'meta', text: role === 'admin' ? 'admin' : 'agent key' }),
    el('span', { class: 'inline' }, el('label', { for: id, text: 'Approve as' }), input),
    session.agent ? el('button', { type: 'button', text: role === 'admin' ? 'All agents' : 'Change agent', onclick: () => { session.agent = ''; start(); } }) : null,
    el('button', { type: 'button', text: 'Sign out', onclick: () => signOut('Signed out.') }));
}

function signInForm(error) {
  const id = uid('token');
  const input = el('input', { id, type: 'password', autocomplete: 'off', required: true, 'aria-describedby': id + '-hint' });
  const form = el('form', { class: 'signin', 'aria-labelledby': 'signin-title', novalidate: true,
    onsubmit: (e) => { e.preventDefault(); signIn(input.value.trim()); } },
    el('h2', { id: 'signin-title', text: 'Sign in' }),
    el('div', { class: 'field' }, el('label', { for: id, text: 'Token' }),
      el('span', { id: id + '-hint', class: 'hint', text: 'The ADMIN_TOKEN or an agent key. It is kept in this browser tab only.' }), input),
    el('button', { type: 'submit', class: 'primary', text: 'Sign in' }));
  show(false, form);
  input.focus();
  if (error) alertError(error);
}

async function detectRole() {
  try {
    await api('GET', '/v1/agents');
    role = 'admin';
  } catch (err) {
    if (!(err instanceof ApiFailure) || err.status !== 403) throw err;
    role = 'key';
  }
}

async function signIn(token) {
  if (!token) return alertError('Enter a token to sign in.');
  session.token = token;
  try {
    await detectRole();
  } catch (err) {
    session.token = '';
    role = null;
    const wrong = err instanceof ApiFailure && err.status === 401;
    return signInForm(wrong ? 'Sign-in failed: that token was not accepted (' + err.message + ').' : describeFailure(err));
  }
  announce(role === 'admin' ? 'Signed in with the admin token.' : 'Signed in with an agent key.');
  return start();
}

function signOut(message) {
  session.token = '';
  session.agent = '';
  role = null;
  renderSession();
  signInForm();
  if (message) announce(message);
}

async function agentList() {
  const { agents } = await api('GET', '/v1/agents');
  const rows = agents.map((a) => el('tr', {},
    el('td', {}, el('button', { type: 'button', class: 'link', text: a.agent, onclick: () => openAgent(a.agent, 'inbox') })),
    el('td', { text: a.tools }), el('td', { text: a.calls }), el('td', { text: a.last_review_at || 'never' })));
  show(true, el('h2', { text: 'Agents' }),
    agents.length === 0 ? el('p', { class: 'empty', text: 'No agents yet: register tools with PUT /v1/agents/:agent/tools.' })
      : el('table', {}, el('caption', { class: 'visually-hidden', text: 'Agents' }),
        el('tr', {}, el('th', { text: 'Agent' }), el('th', { text: 'Tools' }), el('th', { text: 'Calls' }), el('th', { text: 'Last review' })), rows),
    agentForm('Open another agent'));
}

function agentForm(title) {
  const id = uid('agent');
  const input = el('input', { id, type: 'text', required: true, value: session.agent });
  return el('form', { class: 'card', novalidate: true, onsubmit: async (e) => { e.preventDefault(); await checkAgent(input.value.trim()); } },
    el('h3', { text: title }),
    el('div', { class: 'field' }, el('label', { for: id, text: 'Agent id' }), input),
    el('button', { type: 'submit', class: 'primary', text: 'Open' }));
}

async function checkAgent(agent) {
  if (!agent) return alertError('Enter an agent id.');
  try {
    await api('GET', agentPath(agent, 'config'));
  } catch (err) {
    const missing = err instanceof ApiFailure && err.status === 404;
    return alertError(missing ? 'No agent "' + agent + '" that this token reaches.' : describeFailure(err));
  }
  return openAgent(agent, 'inbox');
}

function openAgent(agent, tab, focusTab) {
  session.agent = agent;
  sessionStorage.setItem('ws.tab', tab);
  renderSession();
  const view = TABS.find(([key]) => key === tab) || TABS[0];
  const panel = el('section', { class: 'panel', 'aria-label': view[1] }, el('p', { class: 'empty', text: 'Loading…' }));
  const buttons = TABS.map(([key, label]) => el('button', { type: 'button', 'aria-current': key === view[0] ? 'page' : false,
    'data-tab': key, text: label, onclick: () => openAgent(agent, key, true) }));
  show(!focusTab, el('h2', { text: 'Agent ' + agent }), el('nav', { class: 'tabs', 'aria-label': 'Agent views' }, buttons), panel);
  if (focusTab) main.querySelector('[data-tab="' + view[0] + '"]').focus();
  // After an action re-renders the view, the button that had focus is gone: keep keyboard users in <main>.
  const reload = async () => {
    await render(view, ctx, panel);
    if (!document.activeElement || document.activeElement === document.body) main.focus();
  };
  const ctx = { agent, reload, open: (key) => openAgent(agent, key, true) };
  return render(view, ctx, panel);
}

async function render(view, ctx, panel) {
  try {
    await view[2](ctx, panel);
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      signOut();
      return alertError('Your token is no longer accepted; sign in again.');
    }
    panel.replaceChildren(el('p', { class: 'empty', text: 'Could not load this view.' }));
    alertError(describeFailure(err));
  }
}

async function start() {
  if (!session.token) {
    renderSession();
    return signInForm();
  }
  if (!role) {
    try { await detectRole(); } catch (err) { session.token = ''; return signInForm(describeFailure(err)); }
  }
  renderSession();
  if (session.agent) return openAgent(session.agent, sessionStorage.getItem('ws.tab') || 'inbox');
  if (role === 'admin') return agentList().catch((err) => alertError(describeFailure(err)));
  return show(true, el('h2', { text: 'Choose the agent' }),
    el('p', { text: 'An agent key reaches one agent; type its id.' }), agentForm('Agent'));
}

start();
`;

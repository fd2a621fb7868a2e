/** Starts the dashboard: the login form when the server asks for one, else the page itself. */
import { ApiClient } from './api.js';
import { h, replace } from './dom.js';
import { loginForm } from './login.js';
import { createShell, type Shell } from './shell.js';
import './style.css';

const root = document.getElementById('app')!;
const api = new ApiClient();
let shell: Shell | undefined;

function showLogin(notice: string): void {
  shell?.destroy();
  shell = undefined;
  replace(
    root,
    loginForm(api, notice, () => showShell(true)),
  );
}

function showShell(authEnabled: boolean): void {
  shell?.destroy();
  shell = createShell(api, authEnabled, () => {
    api.logout();
    showLogin('Logged out.');
  });
  replace(root, shell.element);
}

api.onSessionEnd = () => showLogin('Your session has ended. Please log in again.');

api.loginMethods().then(
  (methods) => {
    if (methods.length === 0) showShell(false);
    else if (api.hasSession) showShell(true);
    else showLogin('');
  },
  () => replace(root, h('p', { class: 'message', role: 'alert' }, 'The server cannot be reached.')),
);

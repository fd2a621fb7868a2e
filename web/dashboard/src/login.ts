/** The login form: username and password through `POST /api/login`; shows the server's reason on failure. */
import { ApiRequestError, type ApiClient } from './api.js';
import { h } from './dom.js';

export function loginForm(api: ApiClient, notice: string, onLoggedIn: () => void): HTMLElement {
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', {
    id: 'password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const message = h('p', { class: 'message', role: 'alert', 'aria-live': 'assertive' }, notice);
  const submit = h('button', { type: 'submit' }, 'Log in');
  const form = h(
    'form',
    { class: 'login', 'aria-label': 'Log in' },
    h('h1', {}, 'streamcore'),
    h('label', { for: 'username' }, 'Username'),
    username,
    h('label', { for: 'password' }, 'Password'),
    password,
    submit,
    message,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    message.textContent = 'Logging in…';
    api.login(username.value, password.value).then(onLoggedIn, (error: unknown) => {
      submit.disabled = false;
      message.textContent =
        error instanceof ApiRequestError
          ? `${error.message}: ${error.explanation}`
          : 'The server cannot be reached';
      password.select();
    });
  });
  queueMicrotask(() => username.focus());
  return form;
}

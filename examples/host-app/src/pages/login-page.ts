import { html } from 'hono/html';
import { layout } from './layout.ts';

/** What the login page shows besides the form. */
export interface LoginPageOptions {
  /** A sentence shown above the form after a failed attempt. */
  error?: string;
  /** The login typed last time, kept in the field. */
  login?: string;
  /** Demo accounts to list under the form (the demo prints the same on start). */
  hint?: { logins: readonly string[]; password: string };
}

/** The sign-in form: a plain POST to `/login`, no script needed. */
export function loginPage(options: LoginPageOptions = {}) {
  const body = html`<main class="login">
    <form class="card login-card" method="post" action="/login">
      <h1>Sign in</h1>
      <p class="muted">Analytics for your team, live from your own events.</p>
      ${options.error ? html`<p class="alert" role="alert">${options.error}</p>` : ''}
      <label>Login <input name="login" autocomplete="username" required maxlength="200" value="${options.login ?? ''}" autofocus /></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required maxlength="200" /></label>
      <button type="submit">Sign in</button>
      ${
        options.hint
          ? html`<p class="hint">Demo accounts: ${options.hint.logins.map(
              (login, i) => html`${i ? ' or ' : ''}<code>${login}</code>`,
            )}, password <code>${options.hint.password}</code>.</p>`
          : ''
      }
    </form>
  </main>`;
  return layout({ title: 'Sign in · Analytics', body, bodyClass: 'login-body' });
}

/** A short page for refusals and errors of the host's own routes. */
export function messagePage(title: string, sentence: string) {
  return layout({
    title,
    body: html`<main class="login"><div class="card login-card"><h1>${title}</h1><p>${sentence}</p><p><a href="/">Back to the start</a></p></div></main>`,
    bodyClass: 'login-body',
  });
}

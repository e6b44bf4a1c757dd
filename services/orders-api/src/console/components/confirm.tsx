import type { ComponentChildren } from 'preact';
import type { ConsoleRequestContext } from '../request';
import { Layout, Notice, PostForm } from './layout';

/**
 * The page a destructive action asks first on: what will happen, then a form that does it (with any
 * fields it needs, such as the password again) and a way back that does nothing. The action's
 * button leads here with a GET; only this page's POST acts.
 */
export function ConfirmScreen(props: {
  ctx: ConsoleRequestContext;
  section: string;
  question: string;
  consequences: readonly string[];
  action: string;
  button: string;
  cancelHref: string;
  problem?: string | undefined;
  children?: ComponentChildren;
}) {
  const { t } = props.ctx;
  return (
    <Layout ctx={props.ctx} title={t.security.confirmTitle} section={props.section}>
      {props.problem ? <Notice kind="error">{props.problem}</Notice> : null}
      <section aria-labelledby="question">
        <h2 id="question">{props.question}</h2>
        <ul>
          {props.consequences.map((line) => (
            <li>{line}</li>
          ))}
        </ul>
        <PostForm ctx={props.ctx} action={props.action} class="form-grid">
          {props.children}
          <button type="submit" class="danger">
            {props.button}
          </button>
          <a href={props.cancelHref}>{t.common.cancel}</a>
        </PostForm>
      </section>
    </Layout>
  );
}

/** The password typed again, inside a form of a sensitive action. */
export function PasswordAgainField({ ctx }: { ctx: ConsoleRequestContext }) {
  return (
    <label>
      {ctx.t.security.passwordAgain}
      <input type="password" name="password" autoComplete="current-password" required />
    </label>
  );
}

/** A code of the person's second factor (the app's, or a recovery code) typed again. */
export function CodeAgainField({ ctx }: { ctx: ConsoleRequestContext }) {
  return (
    <label>
      {ctx.t.security.codeAgain}
      <input name="code" autoComplete="one-time-code" spellcheck={false} required maxLength={32} />
    </label>
  );
}

import type { Browser, Page } from 'puppeteer-core';
import type { PageDocument } from './page-dom.ts';

declare const document: PageDocument;

/** One thing the browser saw, as text, with where it came from. */
export interface SeenItem {
  where: string;
  text: string;
}

/**
 * Records everything a browser sees, on every page of every context, from the moment it is
 * attached: request URLs, headers and bodies; response URLs, headers and bodies (scripts, pages,
 * JSON); console messages and page errors; and CSP violations reported by the page itself.
 */
export class BrowserTraffic {
  readonly items: SeenItem[] = [];
  readonly consoleErrors: SeenItem[] = [];
  readonly cspViolations: string[] = [];
  /** Responses whose body has not arrived (yet), and those whose body could not be read. */
  readonly unread = new Set<string>();
  readonly unreadable: string[] = [];
  readonly #pending: Promise<unknown>[] = [];
  readonly #pages = new WeakMap<Page, Promise<void>>();

  /** Watches every page the browser opens from now on. */
  attachBrowser(browser: Browser): void {
    browser.on('targetcreated', (target) => {
      if (target.type() !== 'page') return;
      this.#pending.push(
        target.page().then((page) => {
          if (page) return this.attach(page);
        }),
      );
    });
  }

  /** Watches one page (idempotent: the same promise each time). Await it before navigating. */
  attach(page: Page): Promise<void> {
    let attached = this.#pages.get(page);
    if (!attached) {
      attached = this.#listen(page);
      this.#pages.set(page, attached);
    }
    return attached;
  }

  async #listen(page: Page): Promise<void> {
    // The page reports its own CSP violations to the console, where they are recorded below.
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI}`);
      });
    });
    page.on('request', (request) => {
      const where = `request ${request.method()} ${request.url()}`;
      this.items.push({ where, text: request.url() });
      this.items.push({ where, text: JSON.stringify(request.headers()) });
      const body = request.postData();
      if (body) this.items.push({ where, text: body });
    });
    page.on('response', (response) => {
      const where = `response ${response.status()} ${response.url()}`;
      this.items.push({ where, text: JSON.stringify(response.headers()) });
      const status = response.status();
      if (status >= 300 && status < 400) return;
      if (response.request().method() === 'OPTIONS' || status === 204 || status === 304) return;
      this.unread.add(where);
      this.#pending.push(
        response.buffer().then(
          (body) => {
            this.unread.delete(where);
            this.items.push({ where, text: body.toString('utf8') });
          },
          (error: Error) => {
            this.unread.delete(where);
            this.unreadable.push(`${where}: ${error.message}`);
          },
        ),
      );
    });
    page.on('console', (message) => {
      const item = { where: `console.${message.type()} on ${page.url()}`, text: message.text() };
      this.items.push(item);
      if (message.type() === 'error') this.consoleErrors.push(item);
      if (
        message.text().startsWith('CSP violation') ||
        /Content.Security.Policy/i.test(message.text())
      ) {
        this.cspViolations.push(message.text());
      }
    });
    page.on('pageerror', (error) => {
      const item = {
        where: `page error on ${page.url()}`,
        text: String((error as Error).stack ?? error),
      };
      this.items.push(item);
      this.consoleErrors.push(item);
    });
    page.on('framenavigated', (frame) => {
      this.items.push({ where: 'navigation', text: frame.url() });
    });
  }

  /** Also records a page's current source (the DOM as serialized now). */
  async recordSource(page: Page): Promise<void> {
    this.items.push({ where: `source of ${page.url()}`, text: await page.content() });
  }

  /**
   * Waits until every response body asked for so far has been read, or could not be (a body of a
   * page closed meanwhile never arrives; after five seconds it is given up on).
   */
  async settle(): Promise<void> {
    while (this.#pending.length) {
      const batch = this.#pending
        .splice(0)
        .map((p) => Promise.race([p, new Promise((resolve) => setTimeout(resolve, 5000).unref())]));
      await Promise.all(batch);
    }
  }

  /** The items whose text contains any of the needles. */
  find(needles: readonly string[]): SeenItem[] {
    return this.items.filter((item) => needles.some((needle) => item.text.includes(needle)));
  }
}

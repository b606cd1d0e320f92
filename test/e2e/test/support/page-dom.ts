/**
 * The few DOM members the suite's in-page functions use, typed here because the suite compiles
 * without TypeScript's DOM library: that library's `fetch` types reject the `Uint8Array` bodies
 * the edge's Node-typed sources pass to `Response`. Types only; the functions run in Chromium.
 */

/** An element as the in-page functions touch it. */
export interface PageElement {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  addEventListener(type: string, listener: (event: PageEvent) => void): void;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
  readonly shadowRoot: PageElement | null;
  readonly textContent: string | null;
  readonly cells: ArrayLike<PageElement> & Iterable<PageElement>;
  prepend(node: PageElement): void;
}

/** An event as the in-page functions read it. */
export interface PageEvent {
  readonly detail?: unknown;
  readonly violatedDirective?: string;
  readonly blockedURI?: string;
}

/** The document as the in-page functions use it. */
export interface PageDocument extends PageElement {
  createElement(tag: string): PageElement;
  readonly body: PageElement;
}

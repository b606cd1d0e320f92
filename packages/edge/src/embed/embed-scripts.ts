/**
 * The two small scripts of responsive embeds, as text (every runtime serves them without a file
 * system). The embed page reports its height to its parent with a namespaced message; the host
 * page's optional script resizes the iframe that sent it. Nothing else crosses the frame.
 */

/** The `type` of the message an embed page posts to its parent: `{type, height}`, height in CSS pixels. */
export const RESIZE_MESSAGE_TYPE = 'analytics-chart:resize';

/**
 * `embed-frame.js`, loaded by the embed page. It waits for the element to be defined (before
 * that the page is empty, and reporting it would collapse the frame), then posts the body's
 * height whenever it changes. The target origin is `*`: the message says nothing but a height,
 * and the frame cannot know which of its allowed origins is the parent.
 */
export const FRAME_SCRIPT = `(function () {
  if (window.parent === window) return;
  var last = -1;
  function report() {
    var height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === last || height <= 0) return;
    last = height;
    window.parent.postMessage({ type: '${RESIZE_MESSAGE_TYPE}', height: height }, '*');
  }
  var ready = document.querySelector('analytics-chart')
    ? customElements.whenDefined('analytics-chart')
    : Promise.resolve();
  ready.then(function () {
    new ResizeObserver(report).observe(document.body);
  });
})();
`;

/**
 * `embed.js`, for host pages that allow a script: sets the height of each iframe whose embed page
 * reports one. Only messages from the origin this script was loaded from count, and only for
 * the iframe whose window sent them. Listens once per edge origin even if pasted many times.
 */
export const HOST_SCRIPT = `(function () {
  var script = document.currentScript;
  if (!script || !script.src) return;
  var origin = new URL(script.src).origin;
  var seen = (window.__analyticsChartEmbedOrigins = window.__analyticsChartEmbedOrigins || {});
  if (seen[origin]) return;
  seen[origin] = true;
  window.addEventListener('message', function (event) {
    if (event.origin !== origin) return;
    var data = event.data;
    if (!data || data.type !== '${RESIZE_MESSAGE_TYPE}') return;
    var height = data.height;
    if (typeof height !== 'number' || !(height > 0 && height <= 10000)) return;
    var frames = document.getElementsByTagName('iframe');
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow === event.source) {
        frames[i].style.height = Math.ceil(height) + 'px';
        return;
      }
    }
  });
})();
`;

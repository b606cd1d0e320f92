/**
 * `studio.css`: the studio's only style, a file so the page's CSP needs no inline style. The
 * status line sticks to the bottom of the window, and `scroll-padding-bottom` keeps a control
 * that takes focus from scrolling under it.
 */
export const STUDIO_STYLE = `*,*::before,*::after{box-sizing:border-box}
html{scroll-padding-bottom:72px}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2029;background:#f7f8fa}
.top{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:8px;padding:12px 24px;background:#fff;border-bottom:1px solid #d8dae0}
.top h1{margin:0;font-size:22px}.top p{margin:0;color:#3a3f4b}
main{max-width:1200px;margin:0 auto;padding:16px 24px 48px}
h2{font-size:18px;margin:20px 0 8px}h3{font-size:16px;margin:16px 0 4px}
.columns{display:grid;grid-template-columns:minmax(260px,360px) 1fr;gap:24px;align-items:start}
@media (max-width:760px){.columns{grid-template-columns:1fr}}
.preview{position:sticky;top:8px}
#preview{background:#fff;border:1px solid #d8dae0;border-radius:8px;padding:12px;min-height:120px}
#preview analytics-chart{display:block}
.field{margin:0 0 12px}
label,legend{display:block;font-weight:600;margin-bottom:4px}
.hint{margin:0 0 4px;color:#4a4f5c;font-size:13px}
input,select,textarea,button{font:inherit}
input[type=text],input[type=number],select,textarea{width:100%;padding:6px 8px;border:1px solid #767b87;border-radius:6px;background:#fff;color:#1d2029}
input[readonly]{background:#eceef2}
fieldset{border:1px solid #d8dae0;border-radius:8px;padding:8px 12px 0;margin:0 0 12px}
button{padding:7px 14px;border:1px solid #1d4ed8;border-radius:6px;background:#1d4ed8;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1d4ed8}
button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,[tabindex="-1"]:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.snippet{background:#fff;border:1px solid #d8dae0;border-radius:8px;padding:4px 12px 12px;margin:0 0 12px}
.snippet p{margin:0 0 6px;color:#3a3f4b}
.snippet textarea{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;margin-bottom:6px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #d8dae0;vertical-align:top;overflow-wrap:anywhere}
.status{position:sticky;bottom:0;margin-top:16px;padding:10px 14px;background:#fff;border:1px solid #d8dae0;border-radius:8px;font-weight:600;box-shadow:0 -2px 8px rgba(0,0,0,.06)}
.status:empty{padding:0;border:0;box-shadow:none}
.refusal{padding:12px 16px;border:1px solid #d8dae0;border-radius:8px;background:#fff}
`;

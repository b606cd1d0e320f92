// Records CSP violations before any other script runs, for the bundle test to read.
window.cspViolations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.cspViolations.push(`${event.violatedDirective}: ${event.blockedURI || event.sample}`);
});

/* global document, MutationObserver */
// Names Swagger UI leaves out, added as it renders (WCAG 2.2 AA, checked by axe-core in
// test/browser/reference-page.test.ts): a parameter's select gets the parameter's name, the servers select and the
// request body's text area a name of their own, and an example that scrolls takes the keyboard focus.
new MutationObserver(function () {
  document.querySelectorAll('select:not([aria-label])').forEach(function (select) {
    var row = select.closest('tr[data-param-name]');
    select.setAttribute(
      'aria-label',
      row ? row.getAttribute('data-param-name') : select.id === 'servers' ? 'Server' : 'Choice',
    );
  });
  document.querySelectorAll('textarea:not([aria-label])').forEach(function (area) {
    area.setAttribute('aria-label', 'Request body (JSON)');
  });
  document.querySelectorAll('.highlight-code > pre:not([tabindex])').forEach(function (pre) {
    pre.setAttribute('tabindex', '0');
  });
}).observe(document.body, { subtree: true, childList: true });

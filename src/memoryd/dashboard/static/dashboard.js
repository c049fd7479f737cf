// A form with data-confirm asks before it is sent (no inline handlers: the page's
// Content-Security-Policy runs the dashboard's own script files only).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

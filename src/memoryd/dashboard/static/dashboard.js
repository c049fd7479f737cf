// A form with data-confirm asks before it is sent (no inline handlers: the page's
// Content-Security-Policy runs the dashboard's own script files only).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

// Times come from the server in UTC (<time datetime="…Z">… UTC</time>): each is shown in
// the reader's own zone, as a date and a time, in the page and in what htmx swaps in.
const pad = (n) => String(n).padStart(2, "0");

function localTimes(root) {
  const times = [...root.querySelectorAll("time[datetime]")];
  if (root instanceof HTMLTimeElement && root.dateTime) times.push(root);
  for (const time of times) {
    const at = new Date(time.dateTime);
    if (Number.isNaN(at.getTime())) continue;
    const seconds = "seconds" in time.dataset ? `:${pad(at.getSeconds())}` : "";
    time.title = time.title || time.textContent;
    time.textContent =
      `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ` +
      `${pad(at.getHours())}:${pad(at.getMinutes())}${seconds}`;
  }
}

document.addEventListener("DOMContentLoaded", () => localTimes(document));
document.addEventListener("htmx:load", (event) => localTimes(event.target));

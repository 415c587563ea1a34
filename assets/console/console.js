// paybatch console: live progress. The server says "changed" on a server-sent
// event stream; the page is fetched again and its live parts swapped in.
// Everything else works without this script.
'use strict';
(function () {
  var what = document.body.getAttribute('data-live');
  if (!what || typeof EventSource === 'undefined') return;
  var fetching = false;
  var again = false;
  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    fetch(window.location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        if (!text) return;
        var fresh = new DOMParser().parseFromString(text, 'text/html').querySelectorAll('[data-live-region]');
        var current = document.querySelectorAll('[data-live-region]');
        for (var i = 0; i < current.length && i < fresh.length; i += 1) current[i].innerHTML = fresh[i].innerHTML;
        document.body.setAttribute('data-updated', new Date().toISOString());
      })
      .catch(function () {})
      .then(function () {
        fetching = false;
        if (again) { again = false; refresh(); }
      });
  }
  var stream = new EventSource('/live?what=' + encodeURIComponent(what));
  stream.addEventListener('changed', refresh);
  stream.addEventListener('ready', function () { document.body.setAttribute('data-live-ready', 'yes'); });
})();

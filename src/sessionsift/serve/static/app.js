// sessionsift serve: the app's only script (served from this origin; the CSP allows no other).
// It never puts server text into the page as HTML: what it writes, it writes with textContent.
"use strict";
(function () {
  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  }
  // a link to a record inside folded tool calls opens the folds around it
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var t = id && document.getElementById(id);
    for (var p = t; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    if (t) t.scrollIntoView();
  }
  window.addEventListener("hashchange", openTarget);
  document.addEventListener("DOMContentLoaded", openTarget);
  window.sessionsift = { el: el };
})();

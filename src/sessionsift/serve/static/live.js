// The live page: one EventSource on /live/events (same origin, the cookie goes with it); every
// event carries every row as JSON, written into the table with textContent only.
"use strict";
(function () {
  var el = window.sessionsift.el;
  function cell(tr, cls) {
    var c = tr.querySelector("td." + cls);
    if (!c) { c = el("td", cls); tr.appendChild(c); }
    return c;
  }
  function evidence(r) {
    var d = el("details", "evidence");
    d.appendChild(el("summary", null, "evidence (" + r.evidence.length + ")"));
    var ul = el("ul");
    r.evidence.forEach(function (x) {
      var li = el("li");
      li.appendChild(el("b", null, x.surface));
      li.appendChild(document.createTextNode(": " + (x.value === null ? "" : x.value)));
      ul.appendChild(li);
    });
    r.invisible.forEach(function (x) { ul.appendChild(el("li", null, "invisible: " + x)); });
    d.appendChild(ul);
    return d;
  }
  function update(tr, r) {
    var who = cell(tr, "who");
    if (!who.firstChild) {
      var a = el("a", null, r.session_id);
      a.setAttribute("href", r.href);
      who.appendChild(a);
      who.appendChild(el("div", "meta", r.display));
    }
    var st = cell(tr, "state");
    st.textContent = "";
    st.appendChild(el("span", "verdict " + r.verdict, r.verdict));
    st.appendChild(el("div", "reason meta", r.reason));
    cell(tr, "prompts").textContent = r.prompts === null ? "—" : String(r.prompts);
    cell(tr, "last-prompt").textContent = (r.last_prompt || "").slice(0, 200);
    cell(tr, "last-at").textContent = (r.last_at || "").slice(0, 19).replace("T", " ");
    var ev = cell(tr, "ev");
    var open = ev.querySelector("details") && ev.querySelector("details").open;
    ev.textContent = "";
    var d = evidence(r);
    d.open = !!open;
    ev.appendChild(d);
  }
  function apply(s) {
    var body = document.querySelector("#live tbody");
    var now = Date.now();
    s.rows.forEach(function (r, i) {
      var tr = document.getElementById(r.id);
      var before = tr ? tr.dataset.sig : null;
      if (!tr) { tr = el("tr"); tr.id = r.id; }
      var sig = JSON.stringify([r.verdict, r.reason, r.prompts, r.last_prompt, r.last_at]);
      update(tr, r);
      tr.dataset.sig = sig;
      if (before !== sig) { tr.dataset.updatedAt = String(now); tr.classList.add("changed"); }
      if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null);
    });
    for (var k = body.children.length - 1; k >= s.rows.length; k--) body.removeChild(body.children[k]);
    document.getElementById("live-more").textContent = s.more;
    var c = [];
    Object.keys(s.counts).sort().forEach(function (k) { c.push(k + " " + s.counts[k]); });
    document.getElementById("live-counts").textContent = c.join(" · ");
    var st = document.getElementById("live-status");
    st.dataset.generation = String(s.generation);
    st.dataset.updatedAt = String(now);
    st.textContent = "generation " + s.generation + "; updated " + new Date(now).toLocaleTimeString();
  }
  document.addEventListener("DOMContentLoaded", function () {
    var es = new EventSource("/live/events");
    es.addEventListener("state", function (ev) { apply(JSON.parse(ev.data)); });
    es.addEventListener("open", function () { document.getElementById("live-status").dataset.connected = "1"; });
  });
})();

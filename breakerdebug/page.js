"use strict";
// Renders the status from the JSON embedded in the page, then from ?format=json every 2s.
// Every text from the server goes into the DOM as textContent, never as markup.
(function () {
  const refreshEvery = 2000;

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function cell(className, ...children) {
    const td = el("td", className);
    td.append(...children);
    return td;
  }

  function stateClass(state) {
    return { CLOSED: "closed", OPEN: "open", HALF_OPEN: "half-open" }[state] || "unknown";
  }

  function badge(state) {
    return el("span", "badge " + stateClass(state), state);
  }

  // duration returns a rule's duration field, or def when it is unset.
  function duration(v, def) {
    return v && v !== "0s" ? String(v) : def;
  }

  function percent(v) {
    return typeof v === "number" ? Math.round(v * 1000) / 10 + "%" : String(v);
  }

  // ruleText describes a rule in one line, from whichever fields its JSON has.
  function ruleText(r) {
    const parts = [];
    switch (r.strategy) {
      case "SlowRequestRatio":
        parts.push("slow ≥ " + percent(r.threshold) + " (RT > " + r.maxAllowedRT + ")");
        break;
      case "ErrorRatio":
        parts.push("errors ≥ " + percent(r.threshold));
        break;
      case "ErrorCount":
        parts.push("errors ≥ " + r.threshold);
        break;
      default:
        parts.push(String(r.strategy) + " ≥ " + r.threshold);
    }
    parts.push("min " + (r.minRequestAmount || 5) + " calls in " + duration(r.statInterval, "1s"));
    parts.push("retry " + duration(r.retryTimeout, "?"));
    const probe = duration(r.probeTimeout, "");
    if (probe) parts.push("probe " + probe);
    return parts.join(" · ");
  }

  function ruleCell(r) {
    const td = el("td");
    if (!r || typeof r !== "object") return td;
    if (r.id) td.append(el("div", "rule-id", r.id));
    td.append(el("div", "rule-text", ruleText(r)));
    return td;
  }

  // ruleName is a cell with the rule's ID, or its strategy, and its description on hover.
  function ruleName(r) {
    const td = el("td", "nowrap", r.id || r.strategy || "");
    if (r.strategy) td.title = ruleText(r);
    return td;
  }

  // span formats a number of milliseconds.
  function span(ms) {
    const a = Math.abs(ms);
    if (a < 1000) return Math.round(ms) + "ms";
    if (a < 60000) return (ms / 1000).toFixed(1) + "s";
    return Math.floor(ms / 60000) + "m" + Math.round((a % 60000) / 1000) + "s";
  }

  // clock formats a time as UTC hours to milliseconds.
  function clock(iso) {
    const d = new Date(iso);
    return isNaN(d) ? String(iso) : d.toISOString().slice(11, 23);
  }

  function timeCell(iso, now, className) {
    const td = el("td", className, clock(iso));
    td.title = String(iso);
    const t = Date.parse(iso);
    if (!isNaN(t) && !isNaN(now)) td.append(el("span", "muted", " (" + span(now - t) + " ago)"));
    return td;
  }

  function retryText(b, now) {
    if (b.state === "OPEN" && b.retryAt) return "probe in " + span(Date.parse(b.retryAt) - now);
    if (b.state === "HALF_OPEN" && b.probeDeadline) {
      return "probing; fails in " + span(Date.parse(b.probeDeadline) - now);
    }
    return "";
  }

  function windowText(b) {
    return b.state === "CLOSED" ? b.bad + " bad of " + b.total : "—";
  }

  function emptyRow(text) {
    const td = el("td", "empty", text);
    td.colSpan = 6;
    const tr = el("tr");
    tr.append(td);
    return tr;
  }

  function replaceBody(table, rows) {
    const body = el("tbody");
    body.append(...rows);
    document.querySelector(table + " tbody").replaceWith(body);
  }

  function render(st) {
    const now = Date.parse(st.now);
    const rows = [];
    const counts = { CLOSED: 0, OPEN: 0, HALF_OPEN: 0 };
    for (const res of st.resources || []) {
      for (const b of res.breakers || []) {
        counts[b.state] = (counts[b.state] || 0) + 1;
        const tr = el("tr", "row-" + stateClass(b.state));
        const retry = el("td", "", retryText(b, now));
        if (b.retryAt) retry.title = "retry at " + b.retryAt;
        tr.append(
          el("td", "resource", res.resource),
          ruleCell(b.rule),
          cell("state", badge(b.state)),
          el("td", "num", windowText(b)),
          retry,
          el("td", "num", b.generation));
        rows.push(tr);
      }
    }
    replaceBody("#breakers", rows.length ? rows : [emptyRow("No rules loaded.")]);

    const changes = (st.transitions || []).map((c) => {
      const tr = el("tr");
      const rule = c.rule || {};
      const reason = c.reason === "ThresholdExceeded" ? c.reason + " (" + c.snapshot + ")" : c.reason;
      tr.append(
        timeCell(c.at, now, "nowrap"),
        el("td", "resource", c.resource),
        ruleName(rule),
        cell("change", badge(c.from), el("span", "arrow", "→"), badge(c.to)),
        el("td", "reason", reason),
        el("td", "num", c.generation));
      return tr;
    });
    replaceBody("#transitions", changes.length ? changes : [emptyRow("No state changes yet.")]);

    const resources = (st.resources || []).length;
    document.getElementById("summary").textContent =
      plural(rows.length, "breaker") + " on " + plural(resources, "resource") + ": " +
      counts.OPEN + " open, " + counts.HALF_OPEN + " half-open, " + counts.CLOSED + " closed" +
      " · manager clock " + clock(st.now) + " UTC";
  }

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function footer(text, isError) {
    const f = document.getElementById("updated");
    f.textContent = text;
    f.className = isError ? "error" : "";
  }

  async function refresh() {
    try {
      const resp = await fetch("?format=json", {
        headers: { Accept: "application/json" },
        cache: "no-store",
      });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      render(await resp.json());
      footer("Updated " + new Date().toLocaleTimeString() + "; refreshes every 2 s.");
    } catch (err) {
      footer("Refresh failed (" + err.message + "); retrying every 2 s.", true);
    }
  }

  function loop() {
    refresh().finally(() => setTimeout(loop, refreshEvery));
  }

  let initial = null;
  try {
    initial = JSON.parse(document.getElementById("status").textContent);
  } catch (err) {
    initial = null;
  }
  if (initial) {
    render(initial);
    footer("Refreshes every 2 s.");
    setTimeout(loop, refreshEvery);
  } else {
    loop();
  }
})();

"use strict";
// Renders the status from the JSON embedded in the page, then from the server's event stream
// (?format=events): each state change as it happens ("transition"), and the whole status after
// each burst of them and every 2 s ("status"). It never polls. Every text from the server goes
// into the DOM as textContent, never as markup.
(function () {
  const keep = 100; // the transitions kept, as the server keeps them

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

  // forceBadge marks a resource an operator forced open or closed, apart from any breaker
  // state; null for "auto".
  function forceBadge(force) {
    if (force === "open") return el("span", "badge forced-open", "FORCED OPEN");
    if (force === "closed") return el("span", "badge forced-closed", "FORCED CLOSED");
    return null;
  }

  // dryBadge marks a breaker, or a transition of one, that rejects no call.
  function dryBadge() {
    const b = el("span", "badge dry-run", "dry run");
    b.title = "rejects no call: its rule is DryRun, or its resource is forced closed";
    return b;
  }

  function rampBadge() {
    const b = el("span", "badge ramping-up", "ramping up");
    b.title = "closed on a probe, it admits a growing share of the calls (RampUp)";
    return b;
  }

  function paceBadge() {
    const b = el("span", "badge pacing", "pacing");
    b.title = "its window met the threshold while calls still succeed: instead of opening, it admits what " +
      "the dependency has shown it can serve (Pace)";
    return b;
  }

  // forceOf is the force a resource is under: its override's, if an operator set one, else
  // its settings'.
  function forceOf(res, o) {
    if (o) return o.force;
    return res.settings ? res.settings.force : "auto";
  }

  // overrideText says what an override does and until when, with the operator's note.
  function overrideText(o) {
    const what = { open: "forced open", closed: "forced closed", auto: "auto (the settings' force lifted)" }[o.force] ||
      String(o.force);
    return what + " until " + clock(o.until) + " UTC" + (o.note ? " — " + o.note : "");
  }

  // overrideBadge marks a resource under an operator's override, which its title describes.
  function overrideBadge(o) {
    const b = el("span", "badge override", "override");
    b.title = overrideText(o);
    return b;
  }

  // sided marks the row tr of a name with the name's side: "server" for a route the program
  // serves (its name begins with breakerhttp.ServerPrefix), "client" for a call it makes;
  // nothing for the overflow's names, which may be of either side. The stylesheet shows it
  // after the name, so that the name's cell holds the name alone.
  function sided(tr, side) {
    if (side) tr.dataset.side = side;
    return tr;
  }

  // ruleCell shows a breaker's rule: its ID, if it has one, over the server's description of
  // what it trips on and how it recovers.
  function ruleCell(r, text) {
    const td = el("td");
    if (r && r.id) td.append(el("div", "rule-id", r.id));
    td.append(el("div", "rule-text", text || ""));
    return td;
  }

  // ruleName is a cell with the rule's ID, else its strategy, and its description on hover; a
  // template's (Resource ending in "*") also names the template, since its breakers are listed
  // under the names it matched.
  function ruleName(r, text) {
    const td = el("td", "nowrap", r.id || r.strategy || "");
    if (text) td.title = text;
    if (typeof r.resource === "string" && r.resource.endsWith("*")) {
      td.append(el("span", "muted", " from " + r.resource));
    }
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

  // retryText says when an OPEN breaker lets a probe through, or when a HALF_OPEN one's probe
  // times out; once that time is past (the next call does it), it says so rather than
  // showing a negative time.
  function retryText(b, now) {
    if (b.state === "OPEN" && b.retryAt) {
      const left = Date.parse(b.retryAt) - now;
      return left > 0 ? "probe in " + span(left) : "probe due";
    }
    if (b.state === "HALF_OPEN" && b.probeDeadline) {
      const left = Date.parse(b.probeDeadline) - now;
      return left > 0 ? "probing; fails in " + span(left) : "probe timed out";
    }
    return "";
  }

  // perSecond formats a count over a number of seconds (the minute by default) as a rate per
  // second.
  function perSecond(n, seconds) {
    return (n / (seconds || 60)).toFixed(2);
  }

  // share formats the percentage of the calls that ran, or "—" when none ran: 0% of nothing
  // would read as healthy while a breaker rejects every call.
  function share(percent, ran) {
    return ran > 0 ? percent + "%" : "—";
  }

  // sparkline draws the calls of each second of the last minute, the oldest at the left, as
  // an inline SVG scaled to its busiest second. It clones the empty <svg> the page carries,
  // which the HTML parser put in the SVG namespace, and makes its children in that namespace.
  function sparkline(counts) {
    const svg = document.getElementById("spark-template").cloneNode(false);
    svg.removeAttribute("id");
    svg.removeAttribute("aria-hidden");
    const ns = svg.namespaceURI;
    const w = 120, h = 24; // the template's viewBox
    const top = Math.max(1, ...counts);
    const step = counts.length > 1 ? w / (counts.length - 1) : 0;
    const points = counts.map((c, i) =>
      (i * step).toFixed(1) + "," + (h - 1 - (c / top) * (h - 2)).toFixed(1));
    const area = document.createElementNS(ns, "polygon");
    area.setAttribute("points", "0," + h + " " + points.join(" ") + " " + w + "," + h);
    svg.append(area);
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", points.join(" "));
    svg.append(line);
    const title = document.createElementNS(ns, "title");
    title.textContent = "calls per second over the last minute; busiest second " + Math.max(0, ...counts);
    svg.append(title);
    return svg;
  }

  // callCells are the cells of a resource's last 10 seconds and last minute, in the order of
  // the calls tables.
  function callCells(c) {
    const td = (text, cls) => el("td", cls || "num", text);
    const last = c.last10s || {};
    const rejected = c.rejected || {}; // by cause, as every surface names it
    return [
      td(perSecond(last.calls || 0, 10)),
      td(share(last.errorPercent, last.ran)),
      td(share(last.refusedPercent, last.ran)),
      td(share(last.slowPercent, last.ran)),
      td(perSecond(c.calls)),
      td(perSecond(rejected.open || 0)),
      td(perSecond(rejected.forced_open || 0)),
      td(perSecond(rejected.concurrency_limit || 0)),
      td(perSecond(c.failures)),
      td(perSecond(c.refused || 0)),
      td(perSecond(c.slow)),
      td(share(c.errorPercent, c.ran)),
      td(share(c.slowPercent, c.ran)),
      td(c.rtMax || "—"),
      cell("spark-cell", sparkline(c.perSecond || [])),
    ];
  }

  function callsRow(res, overrides) {
    const tr = el("tr");
    const o = overrides.get(res.resource);
    const force = forceOf(res, o);
    const badges = [forceBadge(force), o ? overrideBadge(o) : null];
    for (const b of res.breakers || []) badges.push(badge(b.state));
    const state = cell("state", ...badges.filter((x) => x));
    if (!res.breakers || res.breakers.length === 0) state.append(el("span", "muted", "no rules"));
    tr.append(el("td", "resource", res.resource), state, ...callCells(res.calls));
    return sided(tr, res.side);
  }

  // uncalledRow is a configured name without calls in the minute, with the called name nearest
  // to it as a warning.
  function uncalledRow(u) {
    const tr = el("tr", "row-open");
    const near = u.nearest ? el("td", "warning", "did you mean " + u.nearest) : el("td", "muted", "—");
    tr.append(el("td", "resource", u.name), el("td", null, (u.configured || []).join(", ")), near);
    return sided(tr, u.side);
  }

  // unruledRow is a name called without rules, or the calls of the names past the Recorder's
  // bounds, which no rule can match.
  function unruledRow(u) {
    const tr = el("tr");
    const what = u.overflow ? el("td", "muted", "names past the bound") : el("td", "muted", "no rules");
    tr.append(el("td", "resource", u.resource), what, ...callCells(u.calls));
    return sided(tr, u.side);
  }

  // badWord names what a breaker's bad calls are: slow for a SlowRequestRatio rule, failed for
  // the others.
  function badWord(b) {
    return b.rule && b.rule.strategy === "SlowRequestRatio" ? "slow" : "failed";
  }

  // percent formats a ratio (0 to 1) as a percentage to 0.1.
  function percent(ratio) {
    return Number((ratio * 100).toFixed(1)) + "%";
  }

  // windowCell shows what a CLOSED breaker counts: its window's slow or failed calls of its
  // calls, the refused ones apart ("2 failed + 1 refused of 10"), with their share ("ratio",
  // which the server leaves out of an empty window); or for a ConsecutiveErrors rule, which
  // keeps no window, its current run of failures, which has no share.
  function windowCell(b) {
    const td = el("td", "num window");
    if (b.state !== "CLOSED") {
      td.textContent = "—";
    } else if (b.rule && b.rule.strategy === "ConsecutiveErrors") {
      td.textContent = b.bad + " failed in a row";
    } else {
      const word = badWord(b);
      const refused = b.refused || 0;
      td.textContent = refused > 0 ?
        (b.bad - refused) + " " + word + " + " + refused + " refused of " + b.total :
        b.bad + " " + word + " of " + b.total;
      if (typeof b.ratio === "number") {
        td.append(" ", el("span", "ratio", "(" + percent(b.ratio) + ")"));
        td.title = "share of the calls in the window that were " + word + (refused > 0 ? " or refused" : "");
      }
    }
    return td;
  }

  function emptyRow(text, columns) {
    const td = el("td", "empty", text);
    td.colSpan = columns || 6;
    const tr = el("tr");
    tr.append(td);
    return tr;
  }

  function replaceBody(table, rows) {
    const body = el("tbody");
    body.append(...rows);
    document.querySelector(table + " tbody").replaceWith(body);
  }

  // rowClass picks the stripe of a breaker's row: a forced resource first, then a dry-run
  // breaker, then the state.
  function rowClass(force, b) {
    if (force === "open" || force === "closed") return "row-forced";
    if (b && b.dryRun) return "row-dry";
    return b ? "row-" + stateClass(b.state) : "";
  }

  // settingsText is what a resource's settings set, with its calls in flight.
  function settingsText(s, inFlight) {
    const parts = [
      "timeout " + (s.timeout && s.timeout !== "0s" ? s.timeout : "none"),
      "max " + (s.maxConcurrency > 0 ? s.maxConcurrency : "none") + " concurrent",
    ];
    if (inFlight !== undefined) parts.push(inFlight + " in flight");
    if (s.force !== "auto") parts.push("force " + s.force);
    return parts.join(" · ");
  }

  // settingsCell shows what applies to a resource's calls and where it comes from: "own" for
  // settings under its name, else the template setting's key; then its override, if any.
  function settingsCell(res, o) {
    const td = el("td", "settings");
    if (res.settings) {
      const own = res.settingsFrom === res.resource;
      const from = el("span", own ? "from own" : "from key", own ? "own" : res.settingsFrom);
      from.title = own ? "settings of its own" : "from the template setting " + res.settingsFrom;
      const line = el("div", "applied");
      line.append(from, " " + settingsText(res.settings, res.inFlight));
      td.append(line);
    } else {
      td.append(el("div", "muted", "no settings"));
    }
    if (o) td.append(el("div", "override-line", "override: " + overrideText(o)));
    return td;
  }

  function breakerRows(res, now, counts, o) {
    const force = forceOf(res, o);
    const marks = () => [forceBadge(force), o ? overrideBadge(o) : null];
    const rows = [];
    for (const b of res.breakers || []) {
      if (b.dryRun) counts.dryRun++;
      else counts[b.state] = (counts[b.state] || 0) + 1;
      const tr = el("tr", rowClass(force, b));
      const retry = el("td", "", retryText(b, now));
      if (b.retryAt) retry.title = "retry at " + b.retryAt;
      const state = cell("state", ...[...marks(), badge(b.state), b.dryRun ? dryBadge() : null,
        b.pacing ? paceBadge() : null, b.rampingUp ? rampBadge() : null].filter((x) => x));
      sided(tr, res.side).append(
        el("td", "resource", res.resource),
        ruleCell(b.rule, b.ruleText),
        state,
        windowCell(b),
        retry,
        el("td", "num", b.generation),
        rows.length === 0 ? settingsCell(res, o) : el("td"));
      rows.push(tr);
    }
    if (rows.length === 0) {
      // A resource with settings or an override and no rules: its force is all there is to show.
      const tr = el("tr", rowClass(force, null));
      const f = marks().filter((x) => x);
      sided(tr, res.side).append(
        el("td", "resource", res.resource),
        el("td", "muted", "no rules"),
        f.length ? cell("state", ...f) : el("td", "muted", "auto"),
        el("td", "num", "—"),
        el("td"),
        el("td", "num"),
        settingsCell(res, o));
      rows.push(tr);
    }
    return rows;
  }

  // The order in which a group line counts its members, by their "worst", which the server
  // orders rows by.
  const worstOrder = ["OPEN", "HALF_OPEN", "PACING", "RAMPING_UP", "FORCED", "OVERRIDDEN", "DRY_RUN", "CLOSED"];

  // worstBadge marks a resource's worst, as its row's badges would.
  function worstBadge(res, o) {
    switch (res.worst) {
      case "PACING": return paceBadge();
      case "RAMPING_UP": return rampBadge();
      case "FORCED": return forceBadge(forceOf(res, o));
      case "OVERRIDDEN": return overrideBadge(o);
      case "DRY_RUN": return dryBadge();
      default: return badge(res.worst);
    }
  }

  // worstClass is the stripe of a group line: its worst member's.
  function worstClass(w) {
    return { OPEN: "row-open", HALF_OPEN: "row-half-open", FORCED: "row-forced", OVERRIDDEN: "row-forced",
      DRY_RUN: "row-dry" }[w] || "";
  }

  // The templates whose group the operator opened, kept across refreshes.
  const openGroups = new Set();

  // groupRow is the one line of the names a template rule made, which opens on their rows:
  // its worst member's state (the server lists members worst first) and their counts by state.
  function groupRow(g, now, counts, overrides) {
    const first = g.members[0];
    const byWorst = new Map();
    for (const m of g.members) byWorst.set(m.worst, (byWorst.get(m.worst) || 0) + 1);
    const tally = worstOrder.filter((w) => byWorst.has(w)).map((w) => byWorst.get(w) + " " + w);
    const summary = el("summary");
    summary.append(el("span", "group-name", g.template), " ",
      worstBadge(first, overrides.get(first.resource)));
    if (first.worst !== "CLOSED") summary.append(el("span", "muted", " worst: " + first.resource));
    summary.append(el("span", "tally", " · " + plural(g.members.length, "name") + ": " + tally.join(" · ")));
    const body = el("tbody");
    for (const m of g.members) body.append(...breakerRows(m, now, counts, overrides.get(m.resource)));
    const members = el("table", "members");
    members.append(body);
    const details = el("details");
    details.dataset.template = g.template;
    details.open = openGroups.has(g.template);
    details.addEventListener("toggle", () => {
      if (details.open) openGroups.add(g.template);
      else openGroups.delete(g.template);
    });
    details.append(summary, members);
    const td = el("td", "group-cell");
    td.colSpan = 7;
    td.append(details);
    const tr = el("tr", ("group " + worstClass(first.worst)).trim());
    tr.append(td);
    return tr;
  }

  // settingsRow shows the settings loaded under a resource's own name, with its calls in flight.
  function settingsRow(res) {
    const s = res.settings;
    const tr = el("tr", rowClass(s.force, null));
    const f = forceBadge(s.force);
    const limit = s.maxConcurrency > 0 ? String(s.maxConcurrency) : "none";
    const inFlight = el("td", "num", res.inFlight);
    if (s.maxConcurrency > 0) inFlight.append(el("span", "muted", " / " + s.maxConcurrency));
    tr.append(
      el("td", "resource", res.resource),
      el("td", "muted", "own"),
      f ? cell("state", f) : el("td", "auto", "auto"),
      el("td", "nowrap", s.timeout && s.timeout !== "0s" ? s.timeout : "none"),
      el("td", "num", limit),
      inFlight);
    return tr;
  }

  // templateSettingRow shows a template setting, a key and not a resource: each name it applies
  // to counts its own calls in flight, and is listed above, with these settings, under its name.
  function templateSettingRow(t) {
    const s = t.settings;
    const tr = el("tr", ("template-key " + rowClass(s.force, null)).trim());
    const f = forceBadge(s.force);
    const key = el("span", "badge key", "template");
    key.title = "a key, not a resource: it applies to every name with its prefix and no settings of its own";
    tr.append(
      el("td", "resource", t.key),
      cell("nowrap", key, el("span", "muted", " " + plural(t.names, "name"))),
      f ? cell("state", f) : el("td", "auto", "auto"),
      el("td", "nowrap", s.timeout && s.timeout !== "0s" ? s.timeout : "none"),
      el("td", "num", s.maxConcurrency > 0 ? String(s.maxConcurrency) : "none"),
      el("td", "num muted", "each name"));
    return tr;
  }

  // overrideRow shows an operator's override: the force, when it ends, the note, and since when.
  function overrideRow(o, now) {
    const tr = el("tr", rowClass(o.force, null));
    let f = forceBadge(o.force);
    if (!f) {
      f = el("span", "badge lifted", "AUTO");
      f.title = "the Force of the resource's settings is lifted";
    }
    const until = el("td", "nowrap", clock(o.until));
    until.title = String(o.until);
    const left = Date.parse(o.until) - now;
    until.append(el("span", "muted", left > 0 ? " (in " + span(left) + ")" : " (ending)"));
    tr.append(
      el("td", "resource", o.resource),
      cell("state", f),
      until,
      o.note ? el("td", "note", o.note) : el("td", "muted", "—"),
      timeCell(o.at, now, "nowrap"));
    return tr;
  }

  function render(st) {
    const now = Date.parse(st.now);
    const rows = [];
    const settings = [];
    const counts = { CLOSED: 0, OPEN: 0, HALF_OPEN: 0, dryRun: 0 };
    const forced = { open: 0, closed: 0 };
    const overrides = new Map((st.overrides || []).map((o) => [o.resource, o]));
    let breakers = 0;
    // The server lists the resources worst first, and the names a template rule made after
    // their worst member: each template is one line where that member comes.
    const items = [];
    const groups = new Map();
    for (const res of st.resources || []) {
      const o = overrides.get(res.resource);
      breakers += (res.breakers || []).length;
      if (res.settings && res.settingsFrom === res.resource) settings.push(settingsRow(res));
      const force = forceOf(res, o);
      if (force in forced) forced[force]++;
      if (!res.template) {
        items.push(res);
        continue;
      }
      let g = groups.get(res.template);
      if (!g) {
        g = { template: res.template, members: [] };
        groups.set(res.template, g);
        items.push(g);
      }
      g.members.push(res);
    }
    for (const item of items) {
      if (item.members) rows.push(groupRow(item, now, counts, overrides));
      else rows.push(...breakerRows(item, now, counts, overrides.get(item.resource)));
    }
    replaceBody("#breakers", rows.length ? rows : [emptyRow("No rules loaded.", 7)]);
    const keys = st.templateSettings || [];
    settings.push(...keys.map(templateSettingRow));
    const withCalls = (st.resources || []).filter((res) => res.calls);
    const recorded = st.unruled !== undefined || withCalls.length > 0;
    document.getElementById("traffic").hidden = !recorded;
    if (recorded) {
      replaceBody("#calls", withCalls.length ? withCalls.map((res) => callsRow(res, overrides)) : [emptyRow("No resources.", 17)]);
      // Before the Recorder's first minute, "uncalled" is absent: no name has gone a minute
      // without calls yet.
      document.getElementById("uncalled-section").hidden = st.uncalled === undefined;
      const uncalled = (st.uncalled || []).map(uncalledRow);
      replaceBody("#uncalled", uncalled.length ? uncalled :
        [emptyRow("Every resource configured was called in the last minute.", 3)]);
      const unruled = (st.unruled || []).map(unruledRow);
      replaceBody("#unruled", unruled.length ? unruled :
        [emptyRow("Every resource called in the last minute has rules or settings.", 17)]);
    }
    replaceBody("#settings", settings.length ? settings : [emptyRow("No resource settings loaded.", 6)]);
    const overrideRows = (st.overrides || []).map((o) => overrideRow(o, now));
    replaceBody("#overrides", overrideRows.length ? overrideRows : [emptyRow("No overrides.", 5)]);

    const changes = (st.transitions || []).map((c) => {
      const tr = sided(el("tr"), c.side);
      const rule = c.rule || {};
      // Both carry the ratio or count that met the threshold.
      const met = c.reason === "ThresholdExceeded" || c.reason === "PacingStarted";
      const reason = el("td", "reason", met ? c.reason + " (" + c.snapshot + ")" : c.reason);
      if (c.note) reason.append(el("div", "note muted", c.note));
      // An override moves no breaker: its change shows the state it left, or nothing for a
      // resource without rules.
      let change;
      if (!c.rule) change = el("td", "muted", "—");
      else if (c.from === c.to) change = cell("change", badge(c.to));
      else change = cell("change", badge(c.from), el("span", "arrow", "→"), badge(c.to));
      if (c.dryRun && c.rule) change.append(dryBadge());
      tr.append(
        timeCell(c.at, now, "nowrap"),
        el("td", "resource", c.resource),
        ruleName(rule, c.ruleText),
        change,
        reason,
        el("td", "num", c.generation),
        el("td", "num", c.seq));
      return tr;
    });
    replaceBody("#transitions", changes.length ? changes : [emptyRow("No state changes yet.", 7)]);

    const resources = (st.resources || []).length;
    let summary = plural(breakers, "breaker") + " on " + plural(resources, "resource") + ": " +
      counts.OPEN + " open, " + counts.HALF_OPEN + " half-open, " + counts.CLOSED + " closed";
    if (counts.dryRun) summary += "; " + counts.dryRun + " dry run (rejecting nothing)";
    if (forced.open) summary += "; " + plural(forced.open, "resource") + " forced open";
    if (forced.closed) summary += "; " + plural(forced.closed, "resource") + " forced closed";
    if (overrides.size) summary += "; " + plural(overrides.size, "operator override");
    if (keys.length) summary += "; " + plural(keys.length, "template setting") + " (" + keys.map((t) => t.key).join(", ") + ")";
    const d = st.templates;
    if (d) {
      summary += "; " + plural(d.resources, "resource") + " with breakers from templates (" + d.breakers +
        " of at most " + d.limit + " breakers, " + d.dropped + " dropped" +
        (d.unlisted ? ", " + d.unlisted + " not listed" : "") + ")";
    }
    document.getElementById("summary").textContent = summary + " · manager clock " + clock(st.now) + " UTC";
  }

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function footer(text, isError) {
    const f = document.getElementById("updated");
    f.textContent = text;
    f.className = isError ? "error" : "";
  }

  // The transitions heard, by seq, the last keep of them: the stream sends the kept ones again
  // when it reconnects, and each counts once.
  const transitions = new Map();

  function hear(list) {
    for (const c of list || []) transitions.set(c.seq, c);
    const seqs = [...transitions.keys()].sort((a, b) => b - a);
    for (const seq of seqs.slice(keep)) transitions.delete(seq);
  }

  function newestFirst() {
    return [...transitions.values()].sort((a, b) => b.seq - a.seq);
  }

  let last = null; // the last status rendered

  function show(st) {
    last = st;
    st.transitions = newestFirst();
    render(st);
  }

  function listen() {
    const stream = new EventSource(location.pathname + "?format=events");
    stream.addEventListener("transition", (e) => {
      hear([JSON.parse(e.data)]);
      if (last) show(last); // the status that follows the burst brings the states
    });
    stream.addEventListener("status", (e) => {
      show(JSON.parse(e.data));
      footer("Live: updated " + new Date().toLocaleTimeString() + " from the server's event stream.");
    });
    stream.addEventListener("error", () => {
      footer("The event stream was interrupted; reconnecting.", true);
      // A browser reconnects by itself, unless the server refused the stream (too many
      // subscribers): then try again a little later.
      if (stream.readyState === EventSource.CLOSED) setTimeout(listen, 5000);
    });
  }

  let initial = null;
  try {
    initial = JSON.parse(document.getElementById("status").textContent);
  } catch (err) {
    initial = null;
  }
  if (initial) {
    hear(initial.transitions);
    show(initial);
    footer("Connecting to the event stream.");
  }
  listen();
})();

// Polls the coordination endpoint, the device and the role's history, and renders them. No framework.
(function () {
  'use strict';

  const ROLE = 'controller';
  const POLL_MS = 500;
  let leaseSpanMs = null; // the longest remaining lease seen for the current term: the bar's 100 %
  let leaseTerm = null;

  // The timeline's window in minutes: the selector, or ?minutes=N in the page's address.
  let historyMinutes = 5;
  const REDRAW_MS = 250; // the timeline slides and the live bar grows between polls
  let history = null;      // the last GET /history answer
  let clockOffsetMs = 0;   // the server's clock minus this browser's, when it answered

  const $ = (id) => document.getElementById(id);

  function text(id, value) {
    $(id).textContent = value === null || value === undefined || value === '' ? '–' : String(value);
  }

  function badge(id, label, kind) {
    const el = $(id);
    el.textContent = label;
    el.className = 'badge ' + kind;
  }

  function time(iso) {
    return iso ? new Date(iso).toLocaleTimeString([], { hour12: false }) : '–';
  }

  function preciseTime(iso) {
    if (!iso) return '–';
    const date = new Date(iso);
    return date.toLocaleTimeString([], { hour12: false }) + '.' + String(date.getMilliseconds()).padStart(3, '0');
  }

  function cell(row, value, className) {
    const td = document.createElement('td');
    td.textContent = value === null || value === undefined ? '–' : String(value);
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }

  function renderRole(report) {
    text('member', report.member);
    const share = report.share;
    text('share', share ? share.held + ' of ' + Object.keys(report.roles).length + ' (fair ' + share.fairShare + ', '
      + share.balance + ', ' + share.moves + ' moves)' : null);
    const role = report.roles[ROLE];
    if (!role) return;
    badge('my-state', role.state, role.state);
    $('release').disabled = role.state !== 'leader';
    text('holder', role.holder || 'nobody');
    badge('current', role.current ? 'yes' : 'no', role.current ? 'yes' : 'no');
    text('term', role.token ? role.token.term : null);
    text('epoch', role.token ? role.token.producerId + ' / ' + role.token.producerEpoch : null);
    text('granted', time(role.grantedAt));
    text('txn', role.transactionState);
    renderLease(role);
    renderRoster(report.member, role.roster);
    renderView(report.clusterView, role.problem);
  }

  // The endpoint answers at once from the last view of the cluster it read: how old, and
  // what is wrong with it (the cluster did not answer, or this member knows better).
  function renderView(view, problem) {
    const el = $('view');
    if (!view) {
      text('view', null);
      return;
    }
    const age = view.ageMillis === null ? 'none read yet' : (view.ageMillis / 1000).toFixed(1) + ' s old';
    el.textContent = problem ? age + ': ' + problem : age;
    el.className = problem ? 'problem' : '';
  }

  function renderLease(role) {
    const bar = $('lease-bar');
    if (!role.deadline) {
      text('lease-left', 'no lease');
      bar.style.width = '0';
      return;
    }
    const term = role.token ? role.token.term : null;
    const left = new Date(role.deadline).getTime() - Date.now();
    if (term !== leaseTerm) {
      leaseTerm = term;
      leaseSpanMs = null;
    }
    leaseSpanMs = Math.max(leaseSpanMs || 0, left);
    if (left > 0) {
      text('lease-left', (left / 1000).toFixed(1) + ' s left (until ' + time(role.deadline) + ')');
    } else {
      text('lease-left', 'expired ' + (-left / 1000).toFixed(1) + ' s ago');
    }
    const fraction = leaseSpanMs > 0 ? Math.max(0, Math.min(1, left / leaseSpanMs)) : 0;
    bar.style.width = (fraction * 100).toFixed(1) + '%';
    bar.className = left <= 0 ? 'gone' : fraction < 0.34 ? 'low' : '';
  }

  function renderRoster(me, roster) {
    const body = $('roster');
    body.replaceChildren();
    if (!roster || roster.length === 0) {
      const row = body.insertRow();
      cell(row, 'nobody registered', 'empty').colSpan = 3;
      return;
    }
    for (const entry of roster) {
      const row = body.insertRow();
      if (entry.member === me) row.className = 'you';
      cell(row, entry.member);
      const rank = cell(row, '');
      const tag = document.createElement('span');
      tag.className = 'badge ' + (entry.holder ? 'leader' : 'standby');
      tag.textContent = entry.holder ? 'holder' : 'rank ' + entry.rank;
      rank.replaceChildren(tag);
      cell(row, time(entry.registeredAt));
    }
  }

  function counts(id, map, bad) {
    const el = $(id);
    el.replaceChildren();
    const entries = Object.entries(map || {});
    if (entries.length === 0) {
      el.textContent = 'none';
      return;
    }
    entries.forEach(([member, n], i) => {
      const span = document.createElement('span');
      span.textContent = member + ': ' + n;
      if (bad && n > 0) span.className = 'bad';
      el.appendChild(span);
      if (i < entries.length - 1) el.appendChild(document.createTextNode(' · '));
    });
  }

  function renderDevice(device) {
    text('device-term', device.highestTerm);
    counts('accepted', device.accepted, false);
    counts('rejected', device.rejected, true);
    const body = $('commands');
    body.replaceChildren();
    if (!device.last || device.last.length === 0) {
      const row = body.insertRow();
      cell(row, 'No commands yet', 'empty').colSpan = 8;
      return;
    }
    for (const c of device.last) {
      const row = body.insertRow();
      cell(row, c.offset);
      cell(row, c.member);
      cell(row, c.term);
      cell(row, c.seq);
      cell(row, c.requestId || 'periodic');
      cell(row, c.producerEpoch);
      cell(row, preciseTime(c.sentAt));
      const verdict = cell(row, '');
      const tag = document.createElement('span');
      tag.className = 'badge ' + c.verdict;
      tag.textContent = c.verdict;
      verdict.replaceChildren(tag);
    }
  }

  function renderRequests(answers, backlog) {
    text('requests-waiting', backlog ? backlog.waiting : null);
    text('requests-here', backlog ? backlog.handledHere : null);
    text('requests-answered', answers ? answers.answered : null);
    text('requests-twice', answers ? answers.answeredTwice : null);
    $('requests-twice').className = 'big' + (answers && answers.answeredTwice > 0 ? ' bad' : '');
    const body = $('answers');
    body.replaceChildren();
    if (!answers || answers.last.length === 0) {
      const row = body.insertRow();
      cell(row, 'No requests yet', 'empty').colSpan = 6;
      return;
    }
    for (const c of answers.last) {
      const row = body.insertRow();
      cell(row, c.offset);
      cell(row, c.requestId);
      cell(row, c.member);
      cell(row, c.term);
      cell(row, c.seq);
      cell(row, preciseTime(c.sentAt));
    }
  }

  // ---- The role's history: a timeline of tenures and gaps (SVG, no library) ----

  const SVG_NS = 'http://www.w3.org/2000/svg';
  const PALETTE = ['#2563eb', '#7c3aed', '#0d9488', '#c2410c', '#db2777', '#4d7c0f', '#0369a1', '#a16207'];
  const PAD_X = 14;
  const BAR_Y = 52;
  const BAR_H = 32;
  const LABEL_ROWS = [BAR_Y - 7, BAR_Y - 22, BAR_Y - 37];  // baselines above the lane, nearest first
  const GAP_ROWS = [BAR_Y + BAR_H + 15, BAR_Y + BAR_H + 30]; // baselines below the lane
  const AXIS_Y = BAR_Y + BAR_H + 38;
  const TICK_STEPS_S = [5, 10, 15, 30, 60, 120, 300, 600];
  const measurer = document.createElement('canvas').getContext('2d');

  function svg(parent, name, attributes, content) {
    const el = document.createElementNS(SVG_NS, name);
    for (const [key, value] of Object.entries(attributes || {})) el.setAttribute(key, String(value));
    if (content !== undefined) el.textContent = content;
    parent.appendChild(el);
    return el;
  }

  function textWidth(value, weight, size) {
    measurer.font = weight + ' ' + size + 'px ' + getComputedStyle(document.body).fontFamily;
    return measurer.measureText(value).width;
  }

  // The same member gets the same color on every member's dashboard.
  function memberColor(member) {
    let hash = 0;
    for (const ch of member) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
    return PALETTE[hash % PALETTE.length];
  }

  function duration(ms) {
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    const s = Math.round(ms / 1000);
    return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  }

  // Labels are placed newest first, right to left, so the current holder's always gets a
  // place: the nearest row whose labels so far all start right of [start, end] (rows[i] is
  // where its leftmost label starts), marking it taken; -1 when every row is taken there.
  function place(rows, start, end) {
    for (let i = 0; i < rows.length; i++) {
      if (end + 8 <= rows[i]) {
        rows[i] = start;
        return i;
      }
    }
    return -1;
  }

  function receiveHistory(answer) {
    if (!answer) return;
    history = answer;
    clockOffsetMs = Date.parse(answer.now) - Date.now();
    text('history-min-gap', duration(answer.minGapMillis));
  }

  function renderTimeline() {
    const chart = $('timeline');
    const width = Math.max(320, chart.clientWidth);
    const height = chart.clientHeight || 148;
    chart.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    chart.replaceChildren();
    if (!history) return;

    const now = Date.now() + clockOffsetMs;
    const from = now - history.minutes * 60000;
    const left = PAD_X;
    const right = width - PAD_X;
    const x = (t) => left + Math.max(0, Math.min(1, (t - from) / (now - from))) * (right - left);

    const defs = svg(chart, 'defs');
    const hatch = svg(defs, 'pattern', { id: 'gap-hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
    svg(hatch, 'rect', { width: 6, height: 6, fill: '#fee2e2' });
    svg(hatch, 'rect', { width: 2, height: 6, fill: '#b91c1c' });

    // The time axis: clock times on round steps, and "now" at the right end.
    svg(chart, 'rect', { class: 'lane', x: left, y: BAR_Y, width: right - left, height: BAR_H, rx: 3 });
    const stepS = TICK_STEPS_S.find((step) => (right - left) / (history.minutes * 60 / step) >= 80) || 600;
    svg(chart, 'line', { class: 'axis', x1: left, x2: right, y1: AXIS_Y, y2: AXIS_Y });
    const startLabel = '−' + history.minutes + ' min';
    const clear = left + textWidth(startLabel, 400, 11) + 8;
    for (let t = Math.ceil(from / (stepS * 1000)) * stepS * 1000; t < now; t += stepS * 1000) {
      const tx = x(t);
      svg(chart, 'line', { class: 'grid', x1: tx, x2: tx, y1: BAR_Y, y2: AXIS_Y });
      svg(chart, 'line', { class: 'axis', x1: tx, x2: tx, y1: AXIS_Y, y2: AXIS_Y + 5 });
      const tick = time(new Date(t).toISOString());
      const half = textWidth(tick, 400, 11) / 2;
      if (tx - half > clear && tx + half < right - 36) {
        svg(chart, 'text', { class: 'tick-label', x: tx, y: AXIS_Y + 18, 'text-anchor': 'middle' }, tick);
      }
    }
    svg(chart, 'text', { class: 'tick-label', x: left, y: AXIS_Y + 18 }, startLabel);

    // Layers: bars and hatches, then the lines to labels outside the lane, then every label
    // (with a white halo), so that no line crosses a label.
    const shapes = svg(chart, 'g');
    const connectors = svg(chart, 'g');
    const labels = svg(chart, 'g');
    const labelRows = LABEL_ROWS.map(() => Infinity);
    const gapRows = GAP_ROWS.map(() => Infinity);

    for (const gap of history.gaps.slice().reverse()) {
      const start = Date.parse(gap.from);
      const end = gap.ongoing ? now : Date.parse(gap.to);
      if (end < from) continue;
      const x1 = x(start);
      const x2 = Math.max(x1 + 2, x(end));
      const ms = gap.ongoing ? now - start : gap.millis;
      const group = svg(shapes, 'g', { class: 'gap' + (gap.ongoing ? ' live' : ''), 'data-after-term': gap.afterTerm,
        'data-before-term': gap.beforeTerm === null ? '' : gap.beforeTerm, 'data-millis': Math.round(ms) });
      svg(group, 'title', {}, (gap.ongoing ? 'No holder has commanded the device since term ' + gap.afterTerm + ' for '
          : 'No holder between term ' + gap.afterTerm + ' and term ' + gap.beforeTerm + ' for ') + duration(ms)
          + ' (' + preciseTime(gap.from) + ' – ' + (gap.ongoing ? 'now' : preciseTime(gap.to)) + ')');
      svg(group, 'rect', { x: x1, y: BAR_Y, width: x2 - x1, height: BAR_H, fill: 'url(#gap-hatch)' });
      const label = (gap.ongoing ? 'no commands · ' : 'gap ') + duration(ms);
      const w = textWidth(label, 650, 12);
      const cx = Math.max(left, Math.min(right - w, (x1 + x2) / 2 - w / 2));
      const row = place(gapRows, cx, cx + w);
      if (row >= 0) {
        svg(connectors, 'line', { class: 'connector', x1: (x1 + x2) / 2, x2: (x1 + x2) / 2, y1: BAR_Y + BAR_H, y2: GAP_ROWS[row] - 11 });
        svg(labels, 'text', { class: 'gap-label', x: cx, y: GAP_ROWS[row], 'data-after-term': gap.afterTerm }, label);
      }
    }

    for (const tenure of history.tenures.slice().reverse()) {
      const start = Date.parse(tenure.from);
      const end = tenure.ongoing ? now : Date.parse(tenure.to);
      if (end < from) continue;
      const x1 = x(start);
      const x2 = Math.max(x1 + 2, x(end));
      const group = svg(shapes, 'g', { class: 'tenure' + (tenure.ongoing ? ' live' : ''), 'data-member': tenure.member,
        'data-term': tenure.term });
      svg(group, 'title', {}, tenure.member + ' · term ' + tenure.term + ': ' + preciseTime(tenure.from) + ' – '
          + (tenure.ongoing ? 'now' : preciseTime(tenure.to)) + ' (' + duration(end - start) + ', ' + tenure.commands + ' commands)');
      svg(group, 'rect', { x: x1, y: BAR_Y, width: x2 - x1, height: BAR_H, rx: 2, fill: memberColor(tenure.member) });
      const label = tenure.member + ' · term ' + tenure.term;
      const w = textWidth(label, 600, 12);
      if (w + 12 <= x2 - x1) {
        svg(labels, 'text', { class: 'tenure-label inside', x: (x1 + x2) / 2, y: BAR_Y + BAR_H / 2 + 4, 'text-anchor': 'middle',
          'data-term': tenure.term }, label);
        continue;
      }
      // Too narrow: above the lane, on the first row with room, tied to the bar by a line.
      const cx = Math.max(left, Math.min(right - w, (x1 + x2) / 2 - w / 2));
      const row = place(labelRows, cx, cx + w);
      if (row >= 0) {
        svg(connectors, 'line', { class: 'connector', x1: (x1 + x2) / 2, x2: (x1 + x2) / 2, y1: LABEL_ROWS[row] + 3, y2: BAR_Y });
        svg(labels, 'text', { class: 'tenure-label outside', x: cx, y: LABEL_ROWS[row], 'data-term': tenure.term }, label);
      }
    }

    svg(chart, 'line', { class: 'now-line', x1: right, x2: right, y1: BAR_Y - 4, y2: AXIS_Y + 5 });
    svg(chart, 'text', { class: 'now-label', x: right, y: AXIS_Y + 18, 'text-anchor': 'end' }, 'now');
    if (history.tenures.length === 0 && history.gaps.length === 0) {
      svg(chart, 'text', { class: 'empty-label', x: (left + right) / 2, y: BAR_Y + BAR_H / 2 + 5, 'text-anchor': 'middle' },
          'No commands in the last ' + history.minutes + ' minutes');
    }
    renderHistorySummary(now, from);
  }

  function renderHistorySummary(now, from) {
    const el = $('history-summary');
    el.replaceChildren();
    const clip = (start, end) => Math.max(0, Math.min(end, now) - Math.max(start, from));
    const tenures = history.tenures.length;
    const members = new Set(history.tenures.map((t) => t.member)).size;
    let leaderless = 0;
    let longest = 0;
    for (const gap of history.gaps) {
      const start = Date.parse(gap.from);
      const end = gap.ongoing ? now : Date.parse(gap.to);
      // The server's length where the gap is whole, so that the summary agrees with the labels.
      const whole = gap.ongoing ? end - start : gap.millis;
      leaderless += start >= from && !gap.ongoing ? whole : clip(start, end);
      longest = Math.max(longest, whole);
    }
    const strong = (value) => {
      const b = document.createElement('strong');
      b.textContent = value;
      return b;
    };
    el.append(strong(tenures), tenures === 1 ? ' tenure' : ' tenures', ' of ', strong(members),
        members === 1 ? ' member, ' : ' members, ', strong(history.gaps.length), history.gaps.length === 1 ? ' gap' : ' gaps');
    if (history.gaps.length > 0) {
      const bad = document.createElement('span');
      bad.className = 'bad';
      bad.textContent = duration(leaderless);
      el.append(': ', bad, ' without a holder\'s commands in the window, the longest ' + duration(longest));
    }
  }

  async function fetchJson(path) {
    const response = await fetch(path, { cache: 'no-store' });
    if (!response.ok) throw new Error(path + ' answered ' + response.status);
    return response.json();
  }

  async function poll() {
    const status = $('status');
    try {
      const [coordination, device, roleHistory] = await Promise.all([fetchJson('actuator/coordination'), fetchJson('device'),
        fetchJson('history?minutes=' + historyMinutes).catch(() => null)]);
      renderRole(coordination);
      renderDevice(device);
      receiveHistory(roleHistory);
      renderTimeline();
      // The backlog needs the cluster's answer; without it the rest of the page still updates.
      renderRequests(device.requests, await fetchJson('requests').catch(() => null));
      status.textContent = 'Updated ' + time(new Date().toISOString());
      status.className = '';
    } catch (e) {
      status.textContent = 'Not reachable: ' + e.message;
      status.className = 'error';
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }

  // Hands the role to the next standby at once (a lease tombstone), instead of waiting
  // for the lease to run out as after a crash.
  $('release').addEventListener('click', async () => {
    $('release').disabled = true;
    try {
      // JSON only: the endpoint refuses other POSTs, which any site's page could send here.
      const response = await fetch('actuator/coordination/' + ROLE,
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      const result = await response.json();
      text('release-result', result.detail);
    } catch (e) {
      text('release-result', 'Release failed: ' + e.message);
    }
  });

  // An operator's call only the leader answers: sent to this member, which forwards it to the holder if need be.
  $('ask-leader').addEventListener('click', async () => {
    $('ask-leader').disabled = true;
    try {
      const response = await fetch('operator/ping', { method: 'POST' });
      const result = await response.json();
      text('ask-result', response.ok
        ? 'handled by ' + result.handledBy + ' under term ' + result.term
          + (result.forwardedBy ? ' (forwarded by ' + result.forwardedBy + ')' : ' (here)')
        : 'Not handled: ' + (result.detail || response.status));
    } catch (e) {
      text('ask-result', 'Asking failed: ' + e.message);
    } finally {
      $('ask-leader').disabled = false;
    }
  });

  // What an operator's tool would do: requests into sample-requests, for the leader's pipeline.
  $('send-requests').addEventListener('click', async () => {
    $('send-requests').disabled = true;
    try {
      const response = await fetch('requests?count=200', { method: 'POST' });
      const result = await response.json();
      text('send-result', response.ok ? 'Sent ' + result.ids.length + ' requests' : 'Refused: ' + (result.detail || response.status));
    } catch (e) {
      text('send-result', 'Sending failed: ' + e.message);
    } finally {
      $('send-requests').disabled = false;
    }
  });

  const askedMinutes = new URLSearchParams(location.search).get('minutes');
  if ([...$('history-minutes').options].some((option) => option.value === askedMinutes)) {
    $('history-minutes').value = askedMinutes;
    historyMinutes = Number(askedMinutes);
  }
  $('history-minutes').addEventListener('change', (event) => {
    historyMinutes = Number(event.target.value);
  });

  poll();
  setInterval(renderTimeline, REDRAW_MS);
})();

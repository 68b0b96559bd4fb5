// Polls the coordination endpoint and the device, and renders both. No framework.
(function () {
  'use strict';

  const ROLE = 'controller';
  const POLL_MS = 500;
  let leaseSpanMs = null; // the longest remaining lease seen for the current term: the bar's 100 %
  let leaseTerm = null;

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

  async function fetchJson(path) {
    const response = await fetch(path, { cache: 'no-store' });
    if (!response.ok) throw new Error(path + ' answered ' + response.status);
    return response.json();
  }

  async function poll() {
    const status = $('status');
    try {
      const [coordination, device] = await Promise.all([fetchJson('actuator/coordination'), fetchJson('device')]);
      renderRole(coordination);
      renderDevice(device);
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
      const response = await fetch('actuator/coordination/' + ROLE, { method: 'POST' });
      const result = await response.json();
      text('release-result', result.detail);
    } catch (e) {
      text('release-result', 'Release failed: ' + e.message);
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

  poll();
})();

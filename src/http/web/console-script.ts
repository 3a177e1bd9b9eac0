// The console's only script, served at /console.js (the Content-Security-Policy allows scripts from 'self' only). Every
// page works without it; it adds: the browser's time zone for people who did not choose one (a cookie), the compose
// page's live preview and uploads (file input, drag and drop), and moving posts on the calendar by dragging them or with
// Alt+arrow keys. Plain ES2017 in a string: the project compiles TypeScript for Node, not for browsers.
export const CONSOLE_SCRIPT = String.raw`(function () {
  'use strict';
  document.documentElement.classList.add('js');

  // The browser's zone, for the server's next page; this page is shown again in it once if it was shown in another.
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone) {
      var before = (document.cookie.match(/(?:^|; )herald_tz=([^;]*)/) || [])[1];
      document.cookie = 'herald_tz=' + encodeURIComponent(zone) + '; path=/; max-age=31536000; samesite=lax';
      var body = document.body;
      var shown = body && body.getAttribute('data-zone');
      var source = body && body.getAttribute('data-zone-source');
      var guard = 'herald-zone-reload:' + zone;
      if (shown && source !== 'person' && shown !== zone && decodeURIComponent(before || '') !== zone && !sessionStorage.getItem(guard)) {
        sessionStorage.setItem(guard, '1');
        location.reload();
        return;
      }
    }
  } catch (error) { /* no zone: the organization's is used */ }

  function post(url, fields, accept) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: accept },
      body: new URLSearchParams(fields).toString(),
    });
  }

  // Compose: live preview, uploads, channel options shown for the chosen channels only.
  var form = document.getElementById('compose');
  if (form) {
    var preview = document.getElementById('preview');
    var timer = null;
    var sequence = 0;
    var fieldsOf = function () {
      var fields = [];
      new FormData(form).forEach(function (value, key) {
        if (typeof value === 'string' && key !== 'action') fields.push([key, value]);
      });
      return fields;
    };
    var refresh = function () {
      var mine = ++sequence;
      preview.setAttribute('aria-busy', 'true');
      post('/compose/preview', fieldsOf(), 'text/html')
        .then(function (response) { return response.text(); })
        .then(function (text) {
          if (mine !== sequence) return;
          preview.innerHTML = text;
          preview.setAttribute('aria-busy', 'false');
        })
        .catch(function () { preview.setAttribute('aria-busy', 'false'); });
    };
    var later = function () {
      clearTimeout(timer);
      timer = setTimeout(refresh, 400);
    };
    var showChosen = function () {
      form.querySelectorAll('.channel-options').forEach(function (details) {
        var box = document.getElementById('channel-' + details.getAttribute('data-channel'));
        details.classList.toggle('unchosen', !(box && box.checked));
      });
    };
    form.addEventListener('input', function (event) {
      if (event.target.type !== 'file') later();
    });
    form.addEventListener('change', function (event) {
      if (event.target.type === 'file') return upload(event.target.closest('.dropzone'), event.target.files, event.target);
      if (event.target.name === 'channel') showChosen();
      later();
    });
    var upload = function (zoneElement, files, input) {
      if (!zoneElement || !files || !files.length) return;
      var item = zoneElement.getAttribute('data-item');
      var list = zoneElement.querySelector('.media-choices');
      var status = zoneElement.querySelector('.upload-status') || zoneElement.appendChild(document.createElement('p'));
      status.className = 'upload-status hint';
      status.setAttribute('role', 'status');
      var pending = Array.prototype.slice.call(files);
      var next = function () {
        var file = pending.shift();
        if (!file) {
          if (input) input.value = '';
          status.textContent = 'Added to the media library.';
          return later();
        }
        status.textContent = 'Uploading ' + file.name + '…';
        var data = new FormData();
        data.append('file', file, file.name);
        fetch('/media/upload?_csrf=' + encodeURIComponent(form.getAttribute('data-csrf')), { method: 'POST', credentials: 'same-origin', headers: { Accept: 'application/json' }, body: data })
          .then(function (response) { return response.json().then(function (json) { return { ok: response.ok, json: json }; }); })
          .then(function (answer) {
            if (!answer.ok) throw new Error(answer.json.message || 'The upload was refused.');
            var media = answer.json;
            var id = 'media-' + item + '-' + media.id;
            var li = document.createElement('li');
            var box = document.createElement('input');
            box.type = 'checkbox'; box.id = id; box.name = 'media-' + item; box.value = media.id; box.checked = true;
            var label = document.createElement('label');
            label.htmlFor = id; label.className = 'media-choice';
            if (/^image\//.test(media.type)) {
              var image = document.createElement('img');
              image.src = media.path; image.alt = ''; image.referrerPolicy = 'no-referrer';
              label.appendChild(image);
            }
            var name = document.createElement('span');
            name.textContent = media.name + (/^video\//.test(media.type) ? ' (video)' : ' (picture)');
            label.appendChild(name);
            li.appendChild(box); li.appendChild(label);
            list.appendChild(li);
            next();
          })
          .catch(function (error) {
            status.textContent = file.name + ': ' + error.message;
            if (input) input.value = '';
          });
      };
      next();
    };
    form.querySelectorAll('.dropzone').forEach(function (zoneElement) {
      zoneElement.addEventListener('dragover', function (event) {
        event.preventDefault();
        zoneElement.classList.add('over');
      });
      zoneElement.addEventListener('dragleave', function () { zoneElement.classList.remove('over'); });
      zoneElement.addEventListener('drop', function (event) {
        event.preventDefault();
        zoneElement.classList.remove('over');
        upload(zoneElement, event.dataTransfer && event.dataTransfer.files, null);
      });
    });
    showChosen();
    refresh();
  }

  // Calendar: drag a post to another day (or hour, in the week view), or Alt+arrow keys on its link.
  var calendar = document.querySelector('table.calendar[data-csrf]');
  if (calendar) {
    var status = document.getElementById('move-status');
    var week = calendar.classList.contains('week');
    var pad = function (number) { return (number < 10 ? '0' : '') + number; };
    var shiftDay = function (date, days) {
      var parts = date.split('-');
      var moved = new Date(Date.UTC(+parts[0], +parts[1] - 1, +parts[2] + days));
      return moved.getUTCFullYear() + '-' + pad(moved.getUTCMonth() + 1) + '-' + pad(moved.getUTCDate());
    };
    var move = function (entry, date, time) {
      status.textContent = 'Moving the post to ' + date + ' ' + time + '…';
      var back = calendar.getAttribute('data-back');
      post('/posts/' + encodeURIComponent(entry.getAttribute('data-post')) + '/move', [
        ['_csrf', calendar.getAttribute('data-csrf')], ['date', date], ['time', time], ['timeZone', calendar.getAttribute('data-zone')], ['back', back],
      ], 'application/json')
        .then(function (response) { return response.json(); })
        .then(function (answer) {
          if (!answer.moved) throw new Error(answer.message || 'The post could not be moved.');
          location.href = back + (back.indexOf('?') < 0 ? '?' : '&') + 'notice=moved&focus=' + encodeURIComponent(answer.id);
        })
        .catch(function (error) { status.textContent = error.message; });
    };
    var dragged = null;
    calendar.addEventListener('dragstart', function (event) {
      dragged = event.target.closest && event.target.closest('li[data-post]');
      if (!dragged) return;
      event.dataTransfer.effectAllowed = 'move';
      event.dataTransfer.setData('text/plain', dragged.getAttribute('data-post'));
    });
    calendar.addEventListener('dragover', function (event) {
      if (dragged && event.target.closest('td[data-date]')) event.preventDefault();
    });
    calendar.addEventListener('drop', function (event) {
      var cell = event.target.closest('td[data-date]');
      if (!dragged || !cell) return;
      event.preventDefault();
      var time = dragged.getAttribute('data-time');
      if (week) time = pad(+cell.getAttribute('data-hour')) + time.slice(2);
      move(dragged, cell.getAttribute('data-date'), time);
      dragged = null;
    });
    calendar.addEventListener('keydown', function (event) {
      var entry = event.target.closest && event.target.closest('li[data-post]');
      if (!entry || !event.altKey) return;
      var cell = entry.closest('td[data-date]');
      var date = cell.getAttribute('data-date');
      var time = entry.getAttribute('data-time');
      var hour = +time.slice(0, 2);
      if (event.key === 'ArrowLeft') date = shiftDay(date, -1);
      else if (event.key === 'ArrowRight') date = shiftDay(date, 1);
      else if (week && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
        hour += event.key === 'ArrowUp' ? -1 : 1;
        if (hour < 0) { hour = 23; date = shiftDay(date, -1); }
        if (hour > 23) { hour = 0; date = shiftDay(date, 1); }
      } else return;
      event.preventDefault();
      move(entry, date, pad(hour) + time.slice(2));
    });
    var focus = new URLSearchParams(location.search).get('focus');
    var target = focus && calendar.querySelector('li[data-post="' + focus.replace(/[^A-Za-z0-9_-]/g, '') + '"] a');
    if (target) target.focus();
  }
})();
`;

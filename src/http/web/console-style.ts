// The console's style sheet, served at /console.css (no inline styles: the Content-Security-Policy allows only 'self').
export const CONSOLE_CSS = `
:root{--fg:#1b1f24;--muted:#59636e;--bg:#f6f8fa;--card:#fff;--line:#d1d9e0;--accent:#0b5cad;--danger:#b3261e;--ok:#1a7f37;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:var(--fg);background:var(--bg)}
*{box-sizing:border-box}body{margin:0}
a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #f0b400;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:10}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.top{display:flex;flex-wrap:wrap;gap:12px 24px;align-items:center;padding:10px 24px;background:var(--card);border-bottom:1px solid var(--line)}
.brand{font-weight:700;font-size:1.2rem;text-decoration:none;color:var(--fg)}
.top nav ul{display:flex;flex-wrap:wrap;gap:4px 16px;list-style:none;margin:0;padding:0}.top nav ul.developer-nav{margin-top:6px;padding-top:4px;border-top:1px solid var(--line);font-size:.9em}.home-list{padding-left:18px}.media-library{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:12px;list-style:none;padding:0}.media-library img{max-width:100%;max-height:160px;display:block}.home-list li{margin:4px 0}
.top nav a{text-decoration:none;padding:4px 2px}.top nav a[aria-current=page]{font-weight:700;border-bottom:2px solid var(--accent)}
.who{margin-left:auto;display:flex;gap:10px;align-items:center;color:var(--muted);font-size:.9rem}
main{max-width:1040px;margin:0 auto;padding:24px}
h1{font-size:1.5rem;margin:0 0 16px}h2{font-size:1.15rem;margin:28px 0 10px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 20px;margin:0 0 16px}
.narrow{max-width:440px;margin:40px auto}
label{display:block;font-weight:600;margin:12px 0 4px}
.hint{color:var(--muted);font-size:.875rem;margin:2px 0 0}
input[type=text],input[type=search],input[type=email],input[type=password],input[type=url],input[type=week],input[type=time],select,textarea{width:100%;max-width:100%;padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit;background:#fff}
textarea{min-height:80px}
button,.button{display:inline-block;margin-top:14px;padding:8px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}button.danger{background:var(--danger);border-color:var(--danger)}
form.inline{display:inline}form.inline button{margin-top:0}
table{width:100%;border-collapse:collapse;background:var(--card)}th,td{text-align:left;padding:8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.85rem;color:var(--muted);font-weight:600}
.avatar{width:32px;height:32px;border-radius:50%;object-fit:cover;vertical-align:middle;background:var(--line)}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:.8rem;font-weight:600;background:#eaeef2}
.badge.ok{background:#dafbe1;color:#116329}.badge.warn{background:#fff8c5;color:#7d4e00}.badge.error{background:#ffebe9;color:#a40e26}
.flash{padding:10px 14px;border-radius:6px}.flash.ok{background:#dafbe1}.flash.error{background:#ffebe9}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem}pre{background:#eaeef2;padding:12px;border-radius:6px;overflow:auto;white-space:pre-wrap;word-break:break-all}
.secret{font-size:1rem;background:#fff8c5;padding:8px;border-radius:6px;word-break:break-all;display:block}
.grid{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:8px}
.actions{display:flex;flex-wrap:wrap;gap:8px;align-items:center}.actions form{margin:0}.actions button{margin-top:0}
.row-actions{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:center}.row-actions form{margin:0}.row-actions button{margin-top:0;padding:2px 8px}
details{margin-top:8px}summary{cursor:pointer;color:var(--accent)}
.consent ul{padding-left:20px}.app-head{display:flex;gap:12px;align-items:center}.app-logo{width:48px;height:48px;border-radius:8px;object-fit:cover}
.initial{width:48px;height:48px;border-radius:8px;background:var(--accent);color:#fff;display:flex;align-items:center;justify-content:center;font-size:1.5rem;font-weight:700}
.calendar{table-layout:fixed}.calendar td{height:96px;padding:4px;font-size:.8rem}.calendar td.outside{background:var(--bg);color:var(--muted)}.calendar td.today{outline:2px solid var(--accent);outline-offset:-2px}
.calendar ul{list-style:none;margin:4px 0 0;padding:0}.calendar .entry{margin:0 0 4px;padding:2px 4px;border-left:3px solid var(--line);overflow-wrap:anywhere}
.calendar .entry.failed{border-left-color:var(--danger);background:#ffebe9}.calendar .entry.status-awaiting_approval{border-left-color:#bf8700;background:#fff8c5}.calendar .excerpt{display:block;color:var(--muted)}
.day-number{font-weight:700}.failed-summary{border-color:var(--danger)}
.preview-list{list-style:none;padding:0}.preview-item.over{border-color:var(--danger)}.preview-head{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 0 8px}
.preview-text{white-space:pre-wrap;word-break:normal;overflow-wrap:anywhere;background:#f6f8fa;border:1px solid var(--line);font-family:system-ui,sans-serif;font-size:.95rem}
.length{color:var(--muted);font-size:.85rem}.length.over{color:var(--danger);font-weight:700}
.media-list{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:8px}.media-list img{max-width:160px;max-height:160px;border-radius:6px;border:1px solid var(--line)}
.card>h2:first-of-type,.card>h3:first-of-type{margin-top:0}.approval{border-color:#bf8700}form.reject{display:flex;flex-wrap:wrap;gap:8px;align-items:end}form.reject label{margin:0}form.reject input{max-width:320px}
fieldset{border:1px solid var(--line);border-radius:6px;margin:12px 0;padding:8px 12px}input[type=datetime-local],input[type=month]{padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit}
.zone-note{margin:-8px 0 16px}.filters>div{min-width:150px}.filters .hint{max-width:240px}
input[type=date],input[type=number]{padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit}input.short{max-width:120px}
.calendar .entry[draggable=true]{cursor:grab}.calendar .entry .move{font-size:.75rem;margin-left:4px}.calendar td.over,.dropzone.over{background:#ddf4ff;outline:2px dashed var(--accent)}
.calendar.week td{height:auto;min-height:28px;padding:2px 4px}.calendar.week th[scope=row]{width:64px;font-weight:600}.calendar th.today{color:var(--accent)}
.move-status:empty{display:none}.move-status{padding:8px 12px;background:#fff8c5;border-radius:6px}
.default-action{position:absolute;left:-9999px;width:1px;height:1px;overflow:hidden}
.compose-grid{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:24px;align-items:start}@media (max-width:900px){.compose-grid{grid-template-columns:1fr}}
.compose-preview{position:sticky;top:8px;max-height:calc(100vh - 16px);overflow:auto}.compose-preview .card{padding:10px 12px}
.choice-list{list-style:none;padding:0;margin:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:4px 12px}
.choice-list label,.choice label,.media-choice{display:inline;font-weight:400;margin:0 0 0 4px}.choice{margin:8px 0}
.dropzone{border:2px dashed var(--line);border-radius:8px;padding:8px 12px;margin-top:12px}
.media-choices{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:8px}.media-choices li{display:flex;align-items:center;gap:4px;background:#fff;border:1px solid var(--line);border-radius:6px;padding:4px}
.media-choices img,.preview-media img{width:64px;height:64px;object-fit:cover;border-radius:4px;vertical-align:middle}
.preview-media{list-style:none;padding:0}.preview-media li{margin:4px 0}.preview-media li.refused{color:var(--danger)}.preview-verdict{margin-top:0}
.js .channel-options.unchosen{display:none}.channel-options{border:1px solid var(--line);border-radius:6px;padding:6px 12px;background:var(--card);margin:8px 0}
textarea.code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}.warnings{color:#7d4e00;font-size:.875rem}
`;

import { createHash } from 'node:crypto';

/**
 * The page's one stylesheet, served from our own origin (the Content-Security-Policy allows no inline style
 * and no script: the page needs none). Its URL carries a hash of its content, so it can be cached for good.
 */
export const STYLESHEET = `
:root{--ink:#1d2330;--muted:#4a5365;--line:#d5dae3;--paper:#fff;--ground:#f3f5f8;--accent:#1f4fd1;--accent-ink:#fff;
--danger:#b42318;--chip:#e8edfb;--chip-ink:#1e3a8a;--notice:#e7f5ec;--notice-ink:#14532d;--error:#fdecec;--error-ink:#8a1f1f;
--warn:#fff4d6;--warn-ink:#6b4500;--focus:#f59e0b}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--ground);color:var(--ink)}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--paper);padding:.5rem 1rem;z-index:1}
.skip:focus{left:.5rem;top:.5rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
header.top{background:var(--paper);border-bottom:1px solid var(--line)}
header.top .bar{max-width:56rem;margin:0 auto;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
header.top .brand{font-weight:700;color:var(--ink);text-decoration:none;margin-right:auto}
header.top nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0;padding:0}
header.top nav a{text-decoration:none;padding:.25rem 0;display:inline-block}
header.top nav a[aria-current=page]{font-weight:700;color:var(--ink);border-bottom:2px solid var(--accent)}
header.top form{margin:0}
header.top .account{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem .75rem}
header.top .who{color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
main{max-width:56rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
p{margin:.5rem 0}
.card{background:var(--paper);border:1px solid var(--line);border-radius:.6rem;padding:1rem;margin:0 0 .75rem}
.card>h2:first-child,.card>h1:first-child{margin-top:0}
.narrow{max-width:32rem}
.notice{background:var(--notice);color:var(--notice-ink);padding:.6rem .8rem;border-radius:.5rem;margin:0 0 1rem}
.error{background:var(--error);color:var(--error-ink);padding:.6rem .8rem;border-radius:.5rem;margin:0 0 1rem}
.warn{background:var(--warn);color:var(--warn-ink)}
.muted{color:var(--muted)}
.small{font-size:.875rem}
ol.memories,ul.plain{list-style:none;margin:0;padding:0}
.memory-text{white-space:pre-wrap;overflow-wrap:anywhere;margin:0 0 .5rem}
.meta{display:flex;flex-wrap:wrap;gap:.25rem .9rem;font-size:.875rem;color:var(--muted);margin:.25rem 0}
.tags{display:flex;flex-wrap:wrap;gap:.35rem;margin:.25rem 0;padding:0;list-style:none}
.tag{display:inline-block;background:var(--chip);color:var(--chip-ink);border-radius:1rem;padding:.1rem .6rem;font-size:.85rem;text-decoration:none}
a.tag:hover{text-decoration:underline}
.badge{display:inline-block;border-radius:.3rem;padding:0 .4rem;font-size:.8rem;font-weight:600}
.badge.role{background:var(--chip);color:var(--chip-ink)}
.space-bar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;background:var(--paper);border:1px solid var(--line);border-radius:.6rem;padding:.5rem .75rem;margin:0 0 .75rem}
.space-bar label{margin:0}
.space-bar select{width:auto;min-width:10rem;max-width:100%;padding:.45rem .5rem}
ul.members li{padding:.4rem 0;border-top:1px solid var(--line)}
ul.members li:first-child{border-top:0}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin-top:.5rem}
.actions form{margin:0}
.restatements{border-left:3px solid #ccc;padding-left:.75rem;margin:.5rem 0}
.restatements ul{list-style:none;padding:0;margin:0}
.restatements li{margin:.25rem 0 .75rem}
.restatements form{margin:0}
.actions label,label.inline{display:inline-flex;align-items:center;gap:.4rem;margin:0;font-weight:400}
ul.plain li+li{margin-top:.4rem}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.45rem .9rem;border-radius:.45rem;border:1px solid var(--accent);background:var(--accent);color:var(--accent-ink);cursor:pointer;text-decoration:none;line-height:1.4}
button.secondary,.button.secondary{background:var(--paper);color:var(--accent)}
button.danger{background:var(--danger);border-color:var(--danger);color:#fff}
button.danger.quiet{background:var(--paper);color:var(--danger)}
button.link{background:none;border:0;color:var(--accent);padding:.25rem 0;font-weight:400;text-decoration:underline}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
.hint{display:block;font-weight:400;font-size:.875rem;color:var(--muted)}
input[type=text],input[type=search],input[type=number],input[type=file],textarea,select{width:100%;font:inherit;padding:.55rem .6rem;border:1px solid #8a93a6;border-radius:.45rem;background:var(--paper);color:var(--ink)}
textarea{min-height:8rem;resize:vertical}
.search{display:grid;grid-template-columns:1fr auto;gap:.5rem;align-items:end}
.search label{margin-top:0}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.75rem 0 1rem}
.filters label{margin:0}
.filters select{width:auto;min-width:10rem;max-width:100%;padding:.45rem .5rem}
.pager{display:flex;justify-content:space-between;gap:1rem;margin:1rem 0}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dl.fields dt{font-weight:600}
dl.fields dd{margin:0;overflow-wrap:anywhere}
table.counts{border-collapse:collapse}
table.counts th,table.counts td{text-align:left;padding:.25rem 1rem .25rem 0}
details summary{cursor:pointer;color:var(--accent)}
@media (max-width:40rem){
  main{padding:.75rem}
  h1{font-size:1.3rem}
  .search{grid-template-columns:1fr}
  dl.fields{grid-template-columns:1fr}
  dl.fields dd{margin-bottom:.4rem}
  header.top .bar{padding:.5rem .75rem}
  header.top nav{order:3;width:100%}
  header.top nav ul{gap:.1rem .9rem;font-size:.95rem}
  header.top form button{padding:.3rem .7rem}
}
`;

export const STYLESHEET_PATH = `/assets/page-${createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 12)}.css`;


// npm pack produces a package that installs and imports on its own.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const pkg = fileURLToPath(new URL('..', import.meta.url))

test('npm pack, install and import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'idemprint-pack-'))
  try {
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: pkg, encoding: 'utf8' })
    const [info] = JSON.parse(out)
    const files = info.files.map((f) => f.path).sort()
    assert.deepEqual(files, ['README.md', 'idemprint.wasm', 'index.d.ts', 'index.js', 'package.json'])
    writeFileSync(join(dir, 'package.json'), '{"name":"app","version":"1.0.0","type":"module","private":true}')
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, info.filename)], { cwd: dir, stdio: 'ignore' })
    writeFileSync(join(dir, 'app.js'), `
      import { compile, RequestError } from '@idemprint/fingerprint'
      const f = await compile({ intent: ['amountCents'] })
      let cls = ''
      try { f.sum({ body: '{"amountCents":1,"amountCents":2}' }) } catch (e) { cls = e instanceof RequestError && e.class }
      console.log(f.sum({ method: 'POST', path: '/v1/payments', body: '{"amountCents":1000}' }), cls)
    `)
    const got = execFileSync(process.execPath, ['--no-warnings', 'app.js'], { cwd: dir, encoding: 'utf8' })
    assert.match(got, /^v1:sha256:[A-Za-z0-9_-]{43} duplicate-name\n$/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

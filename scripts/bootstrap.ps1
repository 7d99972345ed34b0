# A fresh Windows machine to a verified GPU (or CPU) environment: install gpuenv into its own
# virtual environment (.venv beside this checkout), then run `gpuenv setup`. Re-running is safe.
# The Windows counterpart of scripts/bootstrap.sh; runs in Windows PowerShell 5.1 and PowerShell 7.
# Usage: powershell -ExecutionPolicy Bypass -File scripts\bootstrap.ps1 [REQUIREMENT ...] [gpuenv setup options]
#   $env:GPUENV_VENV  where to create gpuenv's environment (default: .venv beside the checkout)
#   $env:PYTHON       the Python 3.10+ to use (default: `py -3`, else `python` on PATH)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 2.0

$here = Split-Path -Parent $PSScriptRoot
if ($env:GPUENV_VENV) { $venv = $env:GPUENV_VENV } else { $venv = Join-Path $here '.venv' }

function Fail([string]$message, [int]$code) {
    [Console]::Error.WriteLine("bootstrap: $message")
    exit $code
}

# Does this command (an executable and its leading arguments) run a Python 3.10 or newer?
function Test-Python([string[]]$command) {
    $exe = $command[0]
    $rest = @()
    if ($command.Length -gt 1) { $rest = $command[1..($command.Length - 1)] }
    if (-not (Get-Command $exe -ErrorAction SilentlyContinue)) { return $false }
    $probe = 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'
    try {
        & $exe @rest -c $probe 2>$null | Out-Null
    } catch {
        return $false
    }
    return ($LASTEXITCODE -eq 0)
}

$candidates = @()
if ($env:PYTHON) {
    $candidates += , @($env:PYTHON)
} else {
    $candidates += , @('py', '-3')
    $candidates += , @('python')
    $candidates += , @('python3')
}
$python = $null
foreach ($candidate in $candidates) {
    if (Test-Python $candidate) { $python = $candidate; break }
}
if ($null -eq $python) {
    $tried = ($candidates | ForEach-Object { $_ -join ' ' }) -join ', '
    Fail ("no Python 3.10 or newer found (tried: $tried). Install it from python.org or with " +
        "'winget install Python.Python.3.12' (tick 'Add python.exe to PATH'), or set " +
        "`$env:PYTHON to the full path of python.exe. The Microsoft Store 'python' alias " +
        "only opens the Store: turn it off under Settings > Apps > App execution aliases.") 2
}
$pythonExe = $python[0]
$pythonArgs = @()
if ($python.Length -gt 1) { $pythonArgs = $python[1..($python.Length - 1)] }

$venvPython = Join-Path $venv 'Scripts\python.exe'
if (-not (Test-Path $venvPython)) {
    Write-Host "creating $venv with $($python -join ' ')"
    & $pythonExe @pythonArgs -m venv $venv
    if ($LASTEXITCODE -ne 0) { Fail "creating the virtual environment $venv failed (exit code $LASTEXITCODE)" $LASTEXITCODE }
}

& $venvPython -m pip install --quiet --upgrade pip
if ($LASTEXITCODE -ne 0) { Fail "upgrading pip in $venv failed (exit code $LASTEXITCODE)" $LASTEXITCODE }
& $venvPython -m pip install --quiet -e $here
if ($LASTEXITCODE -ne 0) { Fail "installing gpuenv from $here failed (exit code $LASTEXITCODE)" $LASTEXITCODE }
Write-Host "gpuenv installed in $venv"

$gpuenv = Join-Path $venv 'Scripts\gpuenv.exe'
& $gpuenv setup @args
$code = $LASTEXITCODE
if ($code -ne 0) { exit $code }
exit 0

@echo off
rem Runs bootstrap.ps1 under any execution policy (Windows ships with "Restricted", which
rem refuses unsigned scripts): the Bypass applies to this one PowerShell process only.
powershell -NoProfile -ExecutionPolicy Bypass -File "%~dp0bootstrap.ps1" %*
exit /b %ERRORLEVEL%

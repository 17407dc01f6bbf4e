@echo off
rem juno.bat: the Windows launcher, the twin of ./juno. Finds a Java 25, builds Juno on first use (mvnw.cmd),
rem then runs the requested command (juno.bat --help) with the JVM flags the engine needs. Commands, options and
rem their environment fallbacks (MODEL_PATH, API_PORT, ...) are parsed by Juno itself, so they are the same as ./juno's;
rem JUNO_JAVA_OPTS (extra JVM flags) and JUNO_REBUILD=1 (force a rebuild) work as they do there.
setlocal EnableExtensions

set "ROOT=%~dp0"
if "%ROOT:~-1%"=="\" set "ROOT=%ROOT:~0,-1%"

rem ---- a Java 25: JAVA_HOME when it is one, else the usual install folders ----
set "JUNO_JAVA_HOME="
if defined JAVA_HOME call :try_java "%JAVA_HOME%"
if not defined JUNO_JAVA_HOME for /d %%D in ("%ProgramFiles%\Eclipse Adoptium\jdk-25*") do if not defined JUNO_JAVA_HOME call :try_java "%%~D"
if not defined JUNO_JAVA_HOME for /d %%D in ("%ProgramFiles%\Java\jdk-25*") do if not defined JUNO_JAVA_HOME call :try_java "%%~D"
if not defined JUNO_JAVA_HOME for /d %%D in ("%ProgramFiles%\Microsoft\jdk-25*") do if not defined JUNO_JAVA_HOME call :try_java "%%~D"
if not defined JUNO_JAVA_HOME (
  echo juno: Java 25 is required but was not found ^(JAVA_HOME=%JAVA_HOME%^). 1>&2
  echo       Install a Java 25 JDK ^(e.g. Eclipse Temurin 25^) and set JAVA_HOME to it. 1>&2
  exit /b 1
)
set "JAVA_HOME=%JUNO_JAVA_HOME%"

rem ---- first use: build ----
set "COORD=%ROOT%\coordinator-service\target\quarkus-app"
set "NODE=%ROOT%\node-service\target\quarkus-app"
set "JUNO_BUILD=0"
if "%JUNO_REBUILD%"=="1" set "JUNO_BUILD=1"
if not exist "%COORD%\quarkus-run.jar" set "JUNO_BUILD=1"
if not exist "%NODE%\quarkus-run.jar" set "JUNO_BUILD=1"
if "%JUNO_BUILD%"=="1" (
  echo juno: building Juno ^(first use; mvnw.cmd -B -q -DskipTests package^), this takes a few minutes... 1>&2
  pushd "%ROOT%"
  call "%ROOT%\mvnw.cmd" -B -q -DskipTests package 1>&2
  if errorlevel 1 (
    popd
    echo juno: the build failed; see the Maven output above. 1>&2
    exit /b 1
  )
  popd
  echo juno: build done. 1>&2
)

"%JAVA_HOME%\bin\java" --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -XX:LoopUnrollLimit=300 -XX:+UseParallelGC %JUNO_JAVA_OPTS% "-Djuno.home=%ROOT%" -cp "%COORD%\app\*;%COORD%\lib\main\*;%COORD%\lib\boot\*" ml.juno.cli.Juno %*
exit /b %ERRORLEVEL%

:try_java
rem Sets JUNO_JAVA_HOME to %1 when %1\bin\java.exe is a Java 25.
if not exist "%~1\bin\java.exe" exit /b 0
"%~1\bin\java.exe" -XshowSettings:properties -version 2>&1 | findstr /l /c:"java.specification.version = 25" >nul
if not errorlevel 1 set "JUNO_JAVA_HOME=%~1"
exit /b 0

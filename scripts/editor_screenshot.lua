-- Neovim (0.7 or later) with its own LSP client attached to `mcp-resolve lsp`,
-- staged for scripts/editor_screenshot.py: the rules file RULES_FILE open,
-- its `append` variant resolving to `openWorldHint: true` (typed in, not
-- saved); once the diagnostics are in, the diagnostic's float is opened on
-- its line (stage `diagnostic`); when STAGE_FILE is removed, the edit undone
-- and a hover on the variant's name (stage `hover`). Each stage is announced by writing its name
-- to STAGE_FILE.

vim.o.number = true
vim.o.signcolumn = 'yes'
vim.o.termguicolors = false
vim.o.laststatus = 2
vim.o.ruler = false
vim.o.showmode = false
vim.o.shortmess = vim.o.shortmess .. 'F'
vim.cmd('syntax on')
-- Floats on a dark grey (the default is the 8-colour light magenta).
vim.cmd('highlight NormalFloat ctermbg=236 ctermfg=252')
vim.cmd('highlight FloatBorder ctermbg=236 ctermfg=244')
vim.diagnostic.config({ virtual_text = { spacing = 2 }, float = { border = 'rounded' } })

local stage_file = os.getenv('STAGE_FILE')
local function announce(stage)
  local f = assert(io.open(stage_file, 'w'))
  f:write(stage)
  f:close()
end

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('RULES_FILE')))
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({
  name = 'mcp-resolve',
  cmd = { os.getenv('MCP_RESOLVE_BIN'), 'lsp' },
  root_dir = vim.fn.fnamemodify(os.getenv('RULES_FILE'), ':h'),
})
vim.lsp.buf_attach_client(buf, id)

-- Type the edit: `append` now opens the world.
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
local row, col, name_row, name_col
for i, line in ipairs(lines) do
  local at = line:find('annotations: { destructiveHint: false }', 1, true)
  if at and lines[i - 2] and lines[i - 2]:find('name: append', 1, true) then
    row, col = i - 1, #line - 2
    name_row, name_col = i - 3, lines[i - 2]:find('append', 1, true)
  end
end
vim.api.nvim_buf_set_text(buf, row, col, row, col, { ', openWorldHint: true' })

local function worst_case()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == 'worst-case' or d.message:find('openWorldHint: true', 1, true) then
      return d
    end
  end
end

local function poll(done, next_step)
  local timer = vim.loop.new_timer()
  timer:start(50, 50, vim.schedule_wrap(function()
    if done() then
      timer:stop()
      timer:close()
      next_step()
    end
  end))
end

local function cleared()
  return worst_case() == nil
end

poll(function() return worst_case() ~= nil end, function()
  local d = worst_case()
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  vim.cmd('normal! zz')
  -- After the analysis' pass too (the second publication).
  vim.defer_fn(function() vim.diagnostic.open_float(buf, { scope = 'line', offset_y = 3 }) end, 700)
  vim.defer_fn(function()
    announce('diagnostic')
    -- The screenshot taken (the stage file removed): the edit undone, and
    -- once its diagnostic is gone, a hover on the variant.
    poll(function() return vim.fn.filereadable(stage_file) == 0 end, function()
      vim.cmd('silent! only')
      vim.cmd('silent undo')
      poll(cleared, function()
        vim.api.nvim_win_set_cursor(0, { name_row + 1, name_col })
        vim.cmd('normal! zt')
        vim.cmd('normal! 3\25')
        vim.lsp.buf.hover()
        vim.defer_fn(function() announce('hover') end, 1500)
      end)
    end)
  end, 1200)
end)
